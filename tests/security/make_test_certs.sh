#!/usr/bin/env bash
# Makes throwaway certificates for the TLS tests with Debian's openssl:
#   make_test_certs.sh DIR
# DIR/ca.pem             the CA that signs the server and the trusted client
# DIR/server.{pem,key}   server certificate for localhost / 127.0.0.1
# DIR/client.{pem,key}   client certificate signed by ca.pem
# DIR/rogue_ca.pem       another CA
# DIR/rogue.{pem,key}    client certificate signed by rogue_ca.pem (must be refused)
# EC P-256 keys: fast to generate (the suite runs this each time).
set -euo pipefail
dir="$1"
mkdir -p "$dir"
cd "$dir"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() {  # name subject
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 2 -out "$1.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
leaf() {  # name ca subject extensions
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$3" -out "$1.csr"
  printf '%s\n' "$4" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
ca ca "maskd test CA"
ca rogue_ca "rogue CA"
leaf server ca localhost "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth"
leaf client ca "tenant-a worker" "extendedKeyUsage=clientAuth"
leaf rogue rogue_ca "rogue worker" "extendedKeyUsage=clientAuth"
