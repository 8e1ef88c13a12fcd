"""A test certificate for loopback made by the test run (never committed): HAProxy terminates TLS with it, and
Chromium trusts it for that run by its public key's hash (`--ignore-certificate-errors-spki-list`)."""

from __future__ import annotations

import base64
import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["TestCertificate", "make_certificate"]


@dataclass(frozen=True)
class TestCertificate:
    """`pem`: the certificate and its key in one file (HAProxy's `crt`); `spki`: base64 SHA-256 of its public key."""

    pem: Path
    spki: str


def make_certificate(folder: Path) -> TestCertificate:
    """A self-signed certificate for 127.0.0.1 and localhost, valid for a day, written into `folder`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webapp test")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    pem = folder / "webapp-test.pem"
    pem.write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    digest = hashes.Hash(hashes.SHA256())
    digest.update(public)
    return TestCertificate(pem, base64.b64encode(digest.finalize()).decode())
