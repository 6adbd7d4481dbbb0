// Package keeper protects the secrets the gateway stores, by envelope
// encryption: a keeper (a KMS key, or a local key) wraps data keys, and
// the secrets are sealed under a data key locally (AES-256-GCM), each bound
// to its place by associated data, so that a value copied into another row
// or under another kid does not open.
//
// A keeper is named by URL and opened with gocloud.dev/secrets, whose
// drivers are all linked in: awskms://, gcpkms://, azurekeyvault://,
// hashivault:// for production, base64key:// for a key in the URL, and
// keyfile:///path (this package's) for a key in a file of mode 0600, which
// is what hdc up makes. A process calls the keeper once per data key it
// unwraps, at start-up or when it reads another data key; sealing and
// opening never call it, so that a request never waits for a KMS.
//
// gocloud.dev/secrets wraps and unwraps; the sealing under a data key is
// written here because no library seals with associated data under a key
// that a keeper wraps: the keeper's own Encrypt has no associated data and
// costs a KMS call per value.
package keeper
