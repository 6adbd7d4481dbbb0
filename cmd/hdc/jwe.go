package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

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

func keyFlag(cmd *cobra.Command, key *string) {
	cmd.Flags().StringVar(key, "key", envOr(keyEnv, ""), "shared key, exactly 16 bytes (env "+keyEnv+")")
}

func newJWEEncryptCmd() *cobra.Command {
	var key, kid string
	var response, compact bool
	cmd := &cobra.Command{
		Use:   "encrypt --key S [--kid KID] [--response | --compact]",
		Short: "Encrypt standard input into an envelope on standard output",
		Long: `Encrypt the plaintext on standard input (alg dir, enc A128CBC-HS256, the key
being the shared string written twice) and print the envelope. By default
the envelope is a request: flattened JSON with protected, iv, ciphertext, tag
and kid. --compact prints the compact serialization instead; --response
prints a response envelope as the edge answers JSON requests: protected
(alg, enc and kid), iv, ciphertext and tag, without a top-level kid.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if response && compact {
				return errors.New("--response and --compact exclude each other")
			}
			k, err := jwe.NewKey(key)
			if err != nil {
				return errors.New("--key must be exactly 16 bytes")
			}
			plaintext, err := readAllLimited(cmd.InOrStdin(), maxEnvelope)
			if err != nil {
				return err
			}
			var out []byte
			switch {
			case response:
				out = jwe.EncryptResponse(k, kid, plaintext)
			case compact:
				out = jwe.EncryptCompact(k, kid, plaintext)
			default:
				out = jwe.EncryptRequest(k, kid, plaintext)
			}
			_, err = cmd.OutOrStdout().Write(append(out, '\n'))
			return err
		},
	}
	keyFlag(cmd, &key)
	cmd.Flags().StringVar(&kid, "kid", "", "key id to name in the envelope")
	cmd.Flags().BoolVar(&response, "response", false, "produce a response envelope")
	cmd.Flags().BoolVar(&compact, "compact", false, "produce the compact serialization")
	return cmd
}

func newJWEDecryptCmd() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "decrypt --key S",
		Short: "Decrypt an envelope on standard input; print the plaintext",
		Long: `Decrypt an envelope (flattened or general JSON, or compact) read from
standard input and write the plaintext to standard output. A
malformed envelope is described; every cryptographic failure (wrong key,
altered data) gives the same message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := jwe.NewKey(key)
			if err != nil {
				return errors.New("--key must be exactly 16 bytes")
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
	keyFlag(cmd, &key)
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
