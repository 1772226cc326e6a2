"""A file-based schema registry: ``registry.json`` assigns each (subject, version) a stable id.

Ids never change once assigned, so framed records stay readable forever. Each version's
``.avsc`` is kept (``avro/<Subject>/v<N>.avsc``) and fingerprinted: editing a registered
file in place is refused; a change is a new version, checked for compatibility.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastavro import parse_schema

from schemas.compat import check_compatible
from schemas.errors import CompatibilityError, RegistryError

SCHEMAS_DIR = Path(__file__).parent
REGISTRY_FILE = SCHEMAS_DIR / "registry.json"


@dataclass(frozen=True)
class SchemaVersion:
    subject: str
    version: int
    schema_id: int
    path: Path
    raw: dict[str, Any]
    parsed: Any
    fingerprint: str


def fingerprint(raw: dict[str, Any]) -> str:
    """SHA-256 of the schema without its docs, keys sorted (ignores docs, key order and whitespace).

    Not the Avro parsing canonical form: that drops defaults, logical types and aliases, and an
    edited default or a ``timestamp-millis`` added in place changes what an id means to readers.
    """
    parse_schema(raw, _write_hint=False)  # a malformed schema is refused here, not at first use
    text = json.dumps(_without_docs(raw), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _without_docs(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_docs(v) for k, v in node.items() if k != "doc"}
    if isinstance(node, list):
        return [_without_docs(v) for v in node]
    return node


def _load_version(root: Path, subject: str, entry: dict[str, Any]) -> SchemaVersion:
    path = root / "avro" / subject / f"v{entry['version']}.avsc"
    if not path.is_file():
        raise RegistryError(f"{subject} v{entry['version']} is registered but {path} is missing")
    raw = json.loads(path.read_text())
    fp = fingerprint(raw)
    if fp != entry["fingerprint"]:
        raise RegistryError(
            f"{path} changed since it was registered as id {entry['id']}; "
            f"registered schemas are immutable: add v{entry['version'] + 1}.avsc and run `fleetpulse schemas register`"
        )
    return SchemaVersion(subject, entry["version"], entry["id"], path, raw, parse_schema(raw), fp)


class SchemaRegistry:
    """Read-only view of the registry; ``register`` appends new versions."""

    def __init__(self, versions: list[SchemaVersion], root: Path = SCHEMAS_DIR) -> None:
        self.root = root
        self._by_id = {v.schema_id: v for v in versions}
        self._by_subject: dict[str, list[SchemaVersion]] = {}
        for v in sorted(versions, key=lambda v: (v.subject, v.version)):
            self._by_subject.setdefault(v.subject, []).append(v)

    @classmethod
    def load(cls, root: Path = SCHEMAS_DIR) -> SchemaRegistry:
        registry_file = root / "registry.json"
        try:
            doc = json.loads(registry_file.read_text())
        except (OSError, ValueError) as exc:
            raise RegistryError(f"cannot read {registry_file}: {exc}") from exc
        versions = [
            _load_version(root, subject, entry)
            for subject, entries in doc["subjects"].items()
            for entry in entries
        ]
        return cls(versions, root)

    @property
    def subjects(self) -> list[str]:
        return sorted(self._by_subject)

    def by_id(self, schema_id: int) -> SchemaVersion | None:
        return self._by_id.get(schema_id)

    def versions(self, subject: str) -> list[SchemaVersion]:
        try:
            return list(self._by_subject[subject])
        except KeyError:
            raise RegistryError(
                f"unknown event type {subject!r}; known: {', '.join(self.subjects)}"
            ) from None

    def latest(self, subject: str) -> SchemaVersion:
        return self.versions(subject)[-1]

    def register(self, subject: str) -> SchemaVersion | None:
        """Register the newest unregistered ``v<N>.avsc`` of ``subject``; None if up to date."""
        folder = self.root / "avro" / subject
        known = {v.version for v in self._by_subject.get(subject, [])}
        candidates = sorted(int(p.stem[1:]) for p in folder.glob("v*.avsc"))
        new = [n for n in candidates if n not in known]
        if not new:
            return None
        version = new[0]
        raw = json.loads((folder / f"v{version}.avsc").read_text())
        if known:
            problems = check_compatible(self.latest(subject).raw, raw)
            if problems:
                raise CompatibilityError(subject, problems)
        schema_id = max(self._by_id, default=0) + 1
        sv = SchemaVersion(
            subject, version, schema_id, folder / f"v{version}.avsc", raw, parse_schema(raw), fingerprint(raw)
        )
        self._by_id[schema_id] = sv
        self._by_subject.setdefault(subject, []).append(sv)
        self._write()
        return sv

    def _write(self) -> None:
        doc = {
            "subjects": {
                s: [{"version": v.version, "id": v.schema_id, "fingerprint": v.fingerprint} for v in vs]
                for s, vs in sorted(self._by_subject.items())
            }
        }
        (self.root / "registry.json").write_text(json.dumps(doc, indent=2) + "\n")
