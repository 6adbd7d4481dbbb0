package contract

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A client's display name and labels, which operators give it to find it
// again (the Admin API, hdc clients, the console) and which the audit
// trail records as they change. Neither is ever a secret.

// Bounds of a client's name and labels.
const (
	// MaxClientName is the longest display name, in characters.
	MaxClientName = 200
	// MaxLabels is the most labels a client has.
	MaxLabels = 32
	// MaxLabelPrefix and MaxLabelName bound a label key's two parts, and
	// MaxLabelValue its value.
	MaxLabelPrefix = 63
	MaxLabelName   = 63
	MaxLabelValue  = 63
)

// CheckClientName refuses a display name that is not 1 to MaxClientName
// characters of UTF-8 without control characters, or that starts or ends
// with a space. Its errors never quote the name.
func CheckClientName(s string) error {
	switch {
	case s == "":
		return errors.New("name is empty")
	case !utf8.ValidString(s):
		return errors.New("name is not UTF-8")
	case utf8.RuneCountInString(s) > MaxClientName:
		return fmt.Errorf("name is longer than %d characters", MaxClientName)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return errors.New("name holds a control character")
	case strings.TrimSpace(s) != s:
		return errors.New("name starts or ends with a space")
	}
	return nil
}

// FoldName is the form of a display name that a search by name prefix
// compares: each character lower-cased, so that "clinic" finds "Clinic
// Seven". The fold of a prefix of a name is a prefix of the name's fold.
func FoldName(s string) string { return strings.ToLower(s) }

// CheckLabelKey refuses a label key that is not as Kubernetes writes
// them: a name of 1 to MaxLabelName ASCII letters, digits, '-', '_' and
// '.', starting and ending with a letter or digit, after an optional
// prefix and '/', the prefix a DNS subdomain of at most MaxLabelPrefix
// characters (lower-case letters, digits, '-' and '.').
func CheckLabelKey(k string) error {
	prefix, name, scoped := strings.Cut(k, "/")
	if !scoped {
		prefix, name = "", k
	}
	switch {
	case scoped && !validLabelPrefix(prefix):
		return errors.New("label key's prefix is not a DNS subdomain of at most 63 characters")
	case !validLabelWord(name, MaxLabelName):
		return errors.New("label key is not 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
	}
	return nil
}

// CheckLabelValue refuses a label value that is not 1 to MaxLabelValue
// ASCII letters, digits, '-', '_' and '.', starting and ending with a
// letter or digit. Unlike Kubernetes, a value is never empty: the audit
// trail writes a label's absence as the empty value.
func CheckLabelValue(v string) error {
	if !validLabelWord(v, MaxLabelValue) {
		return errors.New("label value is not 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
	}
	return nil
}

// ParseLabel reads a label written key=value.
func ParseLabel(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", errors.New("a label is written key=value")
	}
	if err := CheckLabelKey(key); err != nil {
		return "", "", err
	}
	if err := CheckLabelValue(value); err != nil {
		return "", "", err
	}
	return key, value, nil
}

// CheckLabels refuses a client's labels that are more than MaxLabels or
// one of which is not a label.
func CheckLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("a client has at most %d labels", MaxLabels)
	}
	for k, v := range labels {
		if err := CheckLabelKey(k); err != nil {
			return err
		}
		if err := CheckLabelValue(v); err != nil {
			return err
		}
	}
	return nil
}

// validLabelWord reports whether s is 1 to max ASCII letters, digits,
// '-', '_' and '.', starting and ending with a letter or digit.
func validLabelWord(s string, max int) bool {
	if len(s) == 0 || len(s) > max || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// validLabelPrefix reports whether s is a DNS subdomain of at most
// MaxLabelPrefix characters: dot-separated labels of lower-case letters,
// digits and '-', each starting and ending with a letter or digit.
func validLabelPrefix(s string) bool {
	if len(s) == 0 || len(s) > MaxLabelPrefix {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" || !lowerAlnum(part[0]) || !lowerAlnum(part[len(part)-1]) {
			return false
		}
		for i := 0; i < len(part); i++ {
			if c := part[i]; !lowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func alnum(c byte) bool      { return lowerAlnum(c) || 'A' <= c && c <= 'Z' }
func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
