"""A throw-away certificate authority for TLS tests: a CA and a 127.0.0.1/localhost server certificate.

PEM files only, which both Kafka (``ssl.keystore.type=PEM``) and the Python clients read.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Pki:
    ca_file: Path  # the CA certificate: what clients trust (ssl_cafile)
    server_pem: Path  # the server's private key (PKCS#8) followed by its certificate chain
    server_cert: Path
    server_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_pki(folder: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> Pki:
    """Write a CA and a server certificate for ``hosts`` (IPs and DNS names) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    valid = {"not_valid_before": now - dt.timedelta(hours=1), "not_valid_after": now + dt.timedelta(days=2)}

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder(
            subject_name=_name("fleetpulse test CA"), issuer_name=_name("fleetpulse test CA")
        )
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid["not_valid_before"])
        .not_valid_after(valid["not_valid_after"])
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )

    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder(subject_name=_name(hosts[0]), issuer_name=ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid["not_valid_before"])
        .not_valid_after(valid["not_valid_after"])
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [x509.ExtendedKeyUsageOID.SERVER_AUTH, x509.ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )

    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    chain = cert.public_bytes(pem) + ca.public_bytes(pem)
    pki = Pki(folder / "ca.pem", folder / "server.pem", folder / "server.crt", folder / "server.key")
    pki.ca_file.write_bytes(ca.public_bytes(pem))
    pki.server_pem.write_bytes(key_pem + chain)
    pki.server_cert.write_bytes(chain)
    pki.server_key.write_bytes(key_pem)
    return pki
