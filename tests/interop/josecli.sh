#!/bin/sh
# Encrypts and decrypts Health Data Connect envelopes with the latchset jose
# CLI (Debian's package jose, libjose), taking the key as hdc keys add prints
# it: the JWK, in a file, as it is.
#
#   sh josecli.sh encrypt JWK KID FORM [ENC IAT JTI]   plaintext on stdin → envelope on stdout
#   sh josecli.sh decrypt JWK FORM [ENC]               envelope on stdin → plaintext on stdout
#
# FORM is json (flattened) or compact. ENC is the content encryption the
# protected header names (A128CBC-HS256 when not given); IAT and JTI, when
# given, go in the protected header too. The CLI refuses a JWK that says
# "alg":"dir" for content encryption (JOSE_CFG_ERR_JWK_MISMATCH).
set -eu
cmd=$1 jwk=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
umask 077
printf '%s' "$jwk" >"$dir/key.jwk"
case $cmd in
encrypt)
	kid=$3 form=$4 enc=${5:-A128CBC-HS256}
	fresh=""
	[ $# -ge 7 ] && fresh=",\"iat\":$6,\"jti\":\"$7\""
	template="{\"protected\":{\"alg\":\"dir\",\"enc\":\"$enc\",\"kid\":\"$kid\"$fresh}}"
	if [ "$form" = compact ]; then
		jose jwe enc -i "$template" -I - -k "$dir/key.jwk" -c
	else
		jose jwe enc -i "$template" -I - -k "$dir/key.jwk"
	fi
	;;
decrypt)
	cat >"$dir/answer"
	jose jwe dec -i "$dir/answer" -k "$dir/key.jwk"
	;;
*)
	echo "usage: sh josecli.sh encrypt JWK KID FORM [ENC IAT JTI] | decrypt JWK FORM [ENC]" >&2
	exit 2
	;;
esac
