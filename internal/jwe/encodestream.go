package jwe

import (
	"bufio"
	"errors"
	"io"

	"github.com/emmansun/base64"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// streamBuffer is what a RequestWriter gathers before writing to its
// destination: base64 output comes in small pieces.
const streamBuffer = 64 << 10

// RequestWriter writes a request envelope whose plaintext is written to it,
// for a plaintext too large to hold in memory: the envelope EncryptRequest
// (form Request) or EncryptCompact (form Compact) would make of it, but
// written as it goes. Both serializations put the tag after the
// ciphertext, so the envelope's head is written at once, the ciphertext
// (cbchmac.Sealer, encoded) as the plaintext comes, and the tag by Close.
// Its length is known in advance: RequestSize.
type RequestWriter struct {
	out    *bufio.Writer
	sealer *cbchmac.Sealer
	enc    io.WriteCloser // base64url of the ciphertext, into out
	tail   func(tag []byte) []byte
	err    error
}

// ErrNotStreamed: an A256GCM envelope is not written as a stream, as
// crypto/cipher's AES-GCM seals only a whole plaintext; EncryptRequest
// writes it from memory.
var ErrNotStreamed = errors.New("jwe: only an A128CBC-HS256 envelope is written as a stream")

// NewRequestWriter writes the head of a request envelope in form (Request
// or Compact) under k, an A128CBC-HS256 key, to w and returns the writer
// of its plaintext.
func NewRequestWriter(w io.Writer, k *CEK, p Protected, form Form) (*RequestWriter, error) {
	if form != Request && form != Compact {
		return nil, errors.New("jwe: a request is written in form Request or Compact")
	}
	if k.cbc == nil {
		return nil, ErrNotStreamed
	}
	protected := protectedHeader(k.enc, p)
	rw := &RequestWriter{out: bufio.NewWriterSize(w, streamBuffer)}
	rw.enc = base64.NewEncoder(b64, rw.out)
	rw.sealer = k.cbc.NewSealer(protected, rw.enc)
	head, tail := requestFrame(form, protected, p.Kid, rw.sealer.IV())
	rw.tail = tail
	_, rw.err = rw.out.Write(head)
	return rw, rw.err
}

// requestFrame returns what comes before the encoded ciphertext of an
// envelope, and a function that appends what comes after it, given the tag.
func requestFrame(form Form, protected, kid string, iv []byte) ([]byte, func([]byte) []byte) {
	if form == Compact {
		head := b64.AppendEncode(append([]byte(protected), '.', '.'), iv)
		return append(head, '.'), func(tag []byte) []byte { return b64.AppendEncode([]byte{'.'}, tag) }
	}
	head := appendB64Member([]byte{'{'}, "protected", []byte(protected), false)
	head = appendB64Member(head, "iv", iv, true)
	head = append(head, `,"ciphertext":"`...)
	return head, func(tag []byte) []byte {
		b := append([]byte{'"'}, `,"tag":"`...)
		b = append(b64.AppendEncode(b, tag), '"')
		if kid != "" {
			b = appendJSONString(append(b, `,"kid":`...), kid)
		}
		return append(b, '}')
	}
}

// RequestSize is the length in bytes of the A128CBC-HS256 request
// envelope, in form, of a plaintext of n bytes under p: what
// RequestWriter writes.
func RequestSize(p Protected, form Form, n int64) int64 {
	head, tail := requestFrame(form, protectedHeader(EncA128CBCHS256, p), p.Kid, make([]byte, cbchmac.IVSize))
	frame := int64(len(head) + len(tail(make([]byte, cbchmac.TagSize))))
	ct := cbchmac.CiphertextSize(n)
	return frame + ct/3*4 + int64(b64.EncodedLen(int(ct%3)))
}

// Write encrypts p into the envelope.
func (rw *RequestWriter) Write(p []byte) (int, error) {
	if rw.err != nil {
		return 0, rw.err
	}
	n, err := rw.sealer.Write(p)
	rw.err = err
	return n, err
}

// Close ends the envelope: the last blocks, the tag and the members after
// it. It does not close the destination.
func (rw *RequestWriter) Close() error {
	if rw.err != nil {
		return rw.err
	}
	rw.err = errors.New("jwe: RequestWriter closed")
	if err := rw.sealer.Close(); err != nil {
		return err
	}
	if err := rw.enc.Close(); err != nil {
		return err
	}
	if _, err := rw.out.Write(rw.tail(rw.sealer.Tag())); err != nil {
		return err
	}
	return rw.out.Flush()
}
