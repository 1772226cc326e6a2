"""The taxonomy tables live once, in ``schemas/``: every part imports that copy, none writes its own.

A table written again (the XID catalog, fault kind → cause, XID → kind, the operator-step groups) is
found by its entries: any dict literal in package code outside ``schemas/`` that repeats three or more
of a table's pairs is a second copy.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import analytics.jobs.inferred_faults
import analytics.jobs.repairs
import producers.config
import schemas.spans
import streams.core.fleet.outages
import streams.core.policy
from producers.noise import APP_XIDS
from schemas import taxonomy, xids
from streams.core.planning.policy import DEFAULT_CLASS_CAUSES
from streams.core.policy import DEFAULT_POLICY_FILE

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("ground", "producers", "streams", "analytics", "fleetpulse", "webhooks")
TABLES: dict[str, dict[object, object]] = {
    "XID catalog (schemas.xids.XID_NAMES)": dict(xids.XID_NAMES),
    "XID -> fault kind (schemas.xids.XID_KIND)": dict(xids.XID_KIND),
    "fault kind -> cause (schemas.taxonomy.KIND_CAUSE)": dict(taxonomy.KIND_CAUSE),
    "operator step -> group (schemas.taxonomy.STEP_GROUP)": dict(taxonomy.STEP_GROUP),
}


def _copies(path: Path, tables: dict[str, dict[object, object]], root: Path = ROOT) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Dict):
            continue
        pairs = {
            (k.value, v.value)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
        }
        for name, table in tables.items():
            if len(pairs & set(table.items())) >= 3:
                found.append(f"{path.relative_to(root)}:{node.lineno} repeats {name}")
    return found


def test_no_part_writes_a_taxonomy_table_again() -> None:
    copies = [
        hit
        for part in PARTS
        if (ROOT / part).is_dir()
        for path in sorted((ROOT / part).rglob("*.py"))
        for hit in _copies(path, TABLES)
    ]
    assert copies == []


def test_the_scan_finds_a_copy(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('CAUSE = {"fell_off_bus": "faulty_gpu", "dram_uce": "hbm3", "nic": "nic", "x": "y"}\n')
    assert _copies(module, TABLES, tmp_path) == [
        "m.py:1 repeats fault kind -> cause (schemas.taxonomy.KIND_CAUSE)"
    ]


def test_every_part_resolves_to_the_one_copy() -> None:
    assert analytics.jobs.inferred_faults.KIND_CAUSE is taxonomy.KIND_CAUSE
    assert analytics.jobs.inferred_faults.XID_KIND is xids.XID_KIND
    assert analytics.jobs.repairs.KIND_CAUSE is taxonomy.KIND_CAUSE
    assert producers.config.FaultKind is taxonomy.FaultKind
    assert schemas.spans.STEP_GROUP is taxonomy.STEP_GROUP
    assert streams.core.fleet.outages.STEP_GROUP is taxonomy.STEP_GROUP
    assert streams.core.policy.Operation is taxonomy.Operation


def test_error_classes_named_after_a_fault_kind_take_its_cause() -> None:
    for kind, cause in taxonomy.KIND_CAUSE.items():
        if kind in DEFAULT_CLASS_CAUSES:
            assert DEFAULT_CLASS_CAUSES[kind] == cause, kind


def test_the_policy_counts_each_kind_from_its_primary_xids() -> None:
    """The default policy's XID classes named after a fault kind count exactly that kind's primary XIDs."""
    classes = tomllib.loads(DEFAULT_POLICY_FILE.read_text())["classes"]
    xid_classes = {c["name"]: set(c["xids"]) for c in classes if c["event_type"] == "XidRaised"}
    named = {name: codes for name, codes in xid_classes.items() if name in xids.KIND_XIDS}
    assert named, "the policy has no XID class named after a fault kind"
    for name, codes in named.items():
        assert codes == set(xids.KIND_XIDS[name]), name


def test_primary_xids_and_kinds_agree() -> None:
    assert set(xids.KIND_XIDS) <= taxonomy.GPU_FAULT_KINDS
    assert all(code in xids.XID_NAMES for code in xids.XID_KIND)
    assert set(taxonomy.STEP_GROUP) == set(taxonomy.OPERATOR_EVENT_KINDS)


def test_the_simulators_xids_are_in_the_catalog_and_its_noise_is_the_policys() -> None:
    noise = set(tomllib.loads(DEFAULT_POLICY_FILE.read_text())["noise_xids"])
    assert set(APP_XIDS) <= noise
    assert {*APP_XIDS, xids.ROW_REMAP_EVENT, *xids.XID_KIND} <= set(xids.XID_NAMES)
    assert xids.ROW_REMAP_EVENT in noise and not noise & set(xids.XID_KIND)
