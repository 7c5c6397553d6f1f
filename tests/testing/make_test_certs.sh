#!/bin/sh
# Makes the certificates of the TLS tests (tests/integration/daemon_tls_test.cc,
# tests/python/test_tls.py) in DIR: a CA (ca.pem, ca.key) and a second CA ged
# does not trust (other_ca), a server certificate signed by the CA for the
# subject alternative names SAN (server.pem, server.key), a client
# certificate signed by the CA (client) and one signed by the other CA
# (stranger). EC P-256 keys, valid two days.
#
#   make_test_certs.sh DIR SAN        (SAN e.g. "IP:127.0.0.1,DNS:localhost")
set -e
[ $# -eq 2 ] || { echo "usage: $0 DIR SAN" >&2; exit 2; }
cd "$1"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
for ca in ca other_ca; do
  key $ca.key
  openssl req -x509 -new -key $ca.key -out $ca.pem -days 2 -subj /CN=$ca 2>/dev/null
done
sign() {  # name ca extensions
  key $1.key
  openssl req -new -key $1.key -out $1.csr -subj /CN=$1 2>/dev/null
  printf '%s\n' "$3" > $1.ext
  openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -CAcreateserial -out $1.pem -days 2 -extfile $1.ext 2>/dev/null
}
sign server ca "subjectAltName=$2"
sign client ca 'extendedKeyUsage=clientAuth'
sign stranger other_ca 'extendedKeyUsage=clientAuth'
