package clientcmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// keyEnv names the environment variable that --key defaults to, so that the
// shared key need not appear in the process list or shell history.
const keyEnv = "HDC_ENCRYPTION_KEY"

// maxEnvelope bounds what the jwe commands read from standard input.
const maxEnvelope = 1 << 30

func newJWECmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jwe",
		Short: "Encrypt and decrypt payloads as the API's JWE envelopes",
	}
	cmd.AddCommand(newJWEEncryptCmd(), newJWEDecryptCmd())
	return cmd
}

// keyFlags adds --key and --enc, and returns the key they name.
func keyFlags(cmd *cobra.Command) func() (*jwe.CEK, error) {
	var key, enc string
	cli.EnvStringVar(cmd.Flags(), &key, "key", keyEnv, "", "the key: a 16-byte shared string for A128CBC-HS256, the JWK's k for A256GCM")
	cmd.Flags().StringVar(&enc, "enc", jwe.EncA128CBCHS256, "the key's content encryption: A128CBC-HS256 or A256GCM")
	return func() (*jwe.CEK, error) {
		k, err := jwe.NewKeyFor(enc, key)
		if err != nil {
			return nil, fmt.Errorf("--key and --enc: %w", err)
		}
		return k, nil
	}
}

func newJWEEncryptCmd() *cobra.Command {
	var kid string
	var response, compact, fresh bool
	var key func() (*jwe.CEK, error)
	cmd := &cobra.Command{
		Use:   "encrypt --key S [--enc E] [--kid KID] [--fresh] [--response | --compact]",
		Short: "Encrypt standard input into an envelope on standard output",
		Long: `Encrypt the plaintext on standard input (alg dir; enc A128CBC-HS256, the key
being the shared string written twice, or A256GCM with --enc) and print the
envelope. By default the envelope is a request: flattened JSON with
protected, iv, ciphertext, tag and kid. --fresh names the time (iat) and a
new request id (jti) in its protected header. --compact prints the compact
serialization instead; --response prints a response envelope as the edge
answers JSON requests: protected (alg, enc and kid), iv, ciphertext and
tag, without a top-level kid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if response && compact {
				return errors.New("--response and --compact exclude each other")
			}
			k, err := key()
			if err != nil {
				return err
			}
			plaintext, err := readAllLimited(cmd.InOrStdin(), maxEnvelope)
			if err != nil {
				return err
			}
			p := jwe.Protected{Kid: kid}
			if fresh {
				p = jwe.Fresh(kid)
			}
			var out []byte
			switch {
			case response:
				out = jwe.EncryptResponse(k, kid, plaintext)
			case compact:
				out = jwe.EncryptCompact(k, p, plaintext)
			default:
				out = jwe.EncryptRequest(k, p, plaintext)
			}
			_, err = cmd.OutOrStdout().Write(append(out, '\n'))
			return err
		},
	}
	key = keyFlags(cmd)
	cmd.Flags().StringVar(&kid, "kid", "", "key id to name in the envelope")
	cmd.Flags().BoolVar(&fresh, "fresh", false, "name iat (now) and a new jti in the protected header")
	cmd.Flags().BoolVar(&response, "response", false, "produce a response envelope")
	cmd.Flags().BoolVar(&compact, "compact", false, "produce the compact serialization")
	return cmd
}

func newJWEDecryptCmd() *cobra.Command {
	var key func() (*jwe.CEK, error)
	cmd := &cobra.Command{
		Use:   "decrypt --key S [--enc E]",
		Short: "Decrypt an envelope on standard input; print the plaintext",
		Long: `Decrypt an envelope (flattened or general JSON, or compact) read from
standard input and write the plaintext to standard output. A
malformed envelope is described; every cryptographic failure (wrong key,
altered data) gives the same message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := key()
			if err != nil {
				return err
			}
			data, err := readAllLimited(cmd.InOrStdin(), maxEnvelope)
			if err != nil {
				return err
			}
			form := jwe.Compact
			if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
				form = jwe.Flattened
			}
			e, ct, err := jwe.Parse(data, form)
			if err != nil {
				return err
			}
			plaintext, err := e.Decrypt(k, ct)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(plaintext)
			return err
		},
	}
	key = keyFlags(cmd)
	return cmd
}

func readAllLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("standard input is larger than %d bytes", limit)
	}
	return data, nil
}
