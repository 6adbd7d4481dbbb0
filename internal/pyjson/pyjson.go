// Package pyjson writes JSON as Python's json.dumps writes it with
// separators=(',', ':') and its defaults otherwise: no space, object
// members in their order, every character outside printable ASCII escaped
// as \uXXXX (lower-case hex, a surrogate pair above U+FFFF), integers as
// they are, and floats as Python's repr. A receiver written for the
// original service re-serializes the body it parsed that way before it
// checks the signature, so a body must come out of that unchanged.
//
// It is hand-written: encoding/json escapes <, > and & and writes floats
// in Go's form, and no Go library reproduces Python's output byte for
// byte.
package pyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Compact returns the JSON document src as Python writes what json.loads
// reads from it.
func Compact(src []byte) ([]byte, error) {
	d := newDecoder(src)
	out, err := appendValue(nil, d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("pyjson: data after the JSON value")
	}
	return out, nil
}

// AppendMembers appends ,"name":value for each member of the JSON object
// obj, in its order, but those named in skip.
func AppendMembers(dst, obj []byte, skip ...string) ([]byte, error) {
	d := newDecoder(obj)
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("pyjson: not a JSON object")
	}
	for d.More() {
		name, err := d.Token()
		if err != nil {
			return nil, err
		}
		if slices.Contains(skip, name.(string)) {
			if _, err := appendValue(nil, d); err != nil {
				return nil, err
			}
			continue
		}
		dst = AppendString(append(dst, ','), name.(string))
		if dst, err = appendValue(append(dst, ':'), d); err != nil {
			return nil, err
		}
	}
	_, err := d.Token()
	return dst, err
}

func newDecoder(src []byte) *json.Decoder {
	d := json.NewDecoder(bytes.NewReader(src))
	d.UseNumber()
	return d
}

// appendValue appends the next value of d.
func appendValue(dst []byte, d *json.Decoder) ([]byte, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case json.Delim:
		return appendComposite(dst, d, v)
	case string:
		return AppendString(dst, v), nil
	case json.Number:
		return appendNumber(dst, v)
	case bool:
		return strconv.AppendBool(dst, v), nil
	}
	return append(dst, "null"...), nil
}

// appendComposite appends the object or array that open began.
func appendComposite(dst []byte, d *json.Decoder, open json.Delim) ([]byte, error) {
	dst = append(dst, byte(open))
	for first := true; d.More(); first = false {
		if !first {
			dst = append(dst, ',')
		}
		if open == '{' {
			name, err := d.Token()
			if err != nil {
				return nil, err
			}
			dst = append(AppendString(dst, name.(string)), ':')
		}
		var err error
		if dst, err = appendValue(dst, d); err != nil {
			return nil, err
		}
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	return append(dst, byte(open)+2), nil // '{'+2 is '}', '['+2 is ']'
}

// appendNumber appends n as Python writes what json.loads makes of it: an
// int as its digits, a float (a fraction or an exponent) as its repr.
func appendNumber(dst []byte, n json.Number) ([]byte, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			s = "0"
		}
		return append(dst, s...), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return nil, err
	}
	return AppendFloat(dst, f), nil
}

// AppendFloat appends f as Python's repr(f): the shortest digits that
// read back as f, in fixed notation with at least one decimal when the
// decimal point falls from 4 places left of the first digit to 16 right
// of it, else as d.ddde±XX.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	mantissa, exp, _ := strings.Cut(e, "e")
	sign := ""
	if mantissa[0] == '-' {
		sign, mantissa = "-", mantissa[1:]
	}
	digits := strings.Replace(mantissa, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	decpt := x + 1 // the point's place after the first digit
	if decpt <= -4 || decpt > 16 {
		out := append(dst, sign...)
		out = append(out, mantissa...)
		if x < 0 {
			return append(out, "e-"+pad2(-x)...)
		}
		return append(out, "e+"+pad2(x)...)
	}
	dst = append(dst, sign...)
	switch {
	case decpt <= 0:
		return append(append(append(dst, "0."...), strings.Repeat("0", -decpt)...), digits...)
	case decpt >= len(digits):
		return append(append(append(dst, digits...), strings.Repeat("0", decpt-len(digits))...), ".0"...)
	}
	return append(append(append(dst, digits[:decpt]...), '.'), digits[decpt:]...)
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// AppendString appends s as a JSON string with Python's ensure_ascii
// escapes.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r == '\b':
			dst = append(dst, `\b`...)
		case r == '\f':
			dst = append(dst, `\f`...)
		case r >= ' ' && r <= '~':
			dst = append(dst, byte(r))
		default:
			units := []rune{r}
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				units = []rune{hi, lo}
			} else if r == utf8.RuneError {
				units = []rune{0xfffd}
			}
			for _, u := range units {
				dst = append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
			}
		}
	}
	return append(dst, '"')
}
