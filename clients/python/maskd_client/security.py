"""TLS and bearer tokens for maskd connections (server flags --tls_cert/--tls_key,
--tls_client_ca for mutual TLS, --auth_token_file for tokens)."""
from typing import Optional, Sequence, Tuple

import grpc

Metadata = Tuple[Tuple[str, str], ...]


def tls_credentials(ca_file: str, cert_file: Optional[str] = None,
                    key_file: Optional[str] = None) -> grpc.ChannelCredentials:
    """TLS channel credentials: trust `ca_file` (PEM) for the server's certificate;
    with cert_file and key_file, present that client certificate (mutual TLS)."""
    if (cert_file is None) != (key_file is None):
        raise ValueError("a TLS client certificate and its key go together")

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    return grpc.ssl_channel_credentials(
        root_certificates=read(ca_file),
        private_key=read(key_file) if key_file else None,
        certificate_chain=read(cert_file) if cert_file else None)


def token_metadata(token: Optional[str]) -> Metadata:
    """`authorization: Bearer TOKEN`, sent as call metadata so it also works without
    TLS (e.g. a sidecar on a Unix socket), where gRPC refuses call credentials."""
    if not token:
        return ()
    token = token.strip()
    if not token or any(c.isspace() for c in token):
        raise ValueError("a bearer token is one word without spaces")
    return (("authorization", "Bearer " + token),)


def with_metadata(auth: Metadata, metadata: Optional[Sequence[Tuple[str, str]]]):
    """The caller's metadata plus the token's (None when both are empty)."""
    merged = tuple(metadata or ()) + auth
    return merged or None


def channel_security(credentials: Optional[grpc.ChannelCredentials], tls_ca: Optional[str],
                     tls_cert: Optional[str], tls_key: Optional[str],
                     tls_server_name: Optional[str]):
    """(credentials or None for plaintext, extra channel options)."""
    if tls_ca is not None:
        if credentials is not None:
            raise ValueError("give either credentials or tls_ca/tls_cert/tls_key, not both")
        credentials = tls_credentials(tls_ca, tls_cert, tls_key)
    elif tls_cert is not None or tls_key is not None:
        raise ValueError("a TLS client certificate needs tls_ca (the server's CA) too")
    options = []
    if tls_server_name:
        options.append(("grpc.ssl_target_name_override", tls_server_name))
    return credentials, options
