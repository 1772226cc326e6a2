"""Rule defaults live in the packaged policy.toml only: every model default is read from it."""

from __future__ import annotations

import pytest

from schemas.taxonomy import KIND_CAUSE
from streams.core.degraded_policy import DegradedPolicy
from streams.core.errors import PolicyError
from streams.core.planning.policy import PlannerPolicy
from streams.core.policy import (
    AlertPolicy,
    Policy,
    SlowHostPolicy,
    TrainsPolicy,
    ValidationLimits,
    load_policy,
    parse_policy,
)
from streams.core.policy_fields import PACKAGED, PolicyModel

TABLES: dict[str, type[PolicyModel]] = {
    "": Policy,
    "validation": ValidationLimits,
    "slow_host": SlowHostPolicy,
    "planner": PlannerPolicy,
    "alerts": AlertPolicy,
    "trains": TrainsPolicy,
    "degraded": DegradedPolicy,
}
# defaults that are no rule values: a file's own classes and rules, its tables; the planner's class causes
# are the file's table and the taxonomy's causes (the test below)
NOT_IN_FILE = {"": set(TABLES) - {""} | {"classes", "rules"}, "planner": {"causes"}, "trains": {"classes"}}


def test_every_default_of_a_policy_table_is_the_packaged_files_value() -> None:
    for table, model in TABLES.items():
        values = PACKAGED[table] if table else PACKAGED
        for name, field in model.model_fields.items():
            if name in NOT_IN_FILE.get(table, set()):
                continue
            assert name in values, f"[{table}] {name} has a default the packaged file does not give"
            assert field.default == values[name], f"[{table}] {name}: {field.default!r} != {values[name]!r}"


def test_the_planners_class_causes_are_the_files_and_a_kinds_class_its_kinds() -> None:
    """Each packaged error class has a cause: the packaged ``[planner.causes]`` names it, or the class is named
    after a fault kind and has that kind's cause (``schemas.taxonomy``); no other table gives one."""
    default = PlannerPolicy.model_fields["causes"].default
    named = PACKAGED["planner"]["causes"]
    assert {c: default[c] for c in named} == named
    assert {c: cause for c, cause in default.items() if c not in named} == {
        c: KIND_CAUSE[c] for c in default if c not in named and c in KIND_CAUSE
    }
    assert set(default) == {c["name"] for c in PACKAGED["classes"]}
    assert load_policy().planner.causes == default  # the packaged file read as a file: the same table


def test_a_file_naming_some_class_causes_keeps_the_others() -> None:
    causes = parse_policy({"planner": {"causes": {"gpu_fault": "hbm3"}}}).planner.causes
    default = PlannerPolicy.model_fields["causes"].default
    assert causes == {**default, "gpu_fault": "hbm3"} and default["gpu_fault"] == "faulty_gpu"


def test_a_file_may_restate_the_degraded_bounds_but_not_change_them() -> None:
    """The samples fold reads ``[degraded]`` from the packaged file only: a file's other value is refused."""
    packaged = PACKAGED["degraded"]
    assert parse_policy({"degraded": dict(packaged)}).degraded == DegradedPolicy()
    with pytest.raises(PolicyError, match=r"degraded\.port_drop.*packaged"):
        parse_policy({"degraded": {"port_drop": packaged["port_drop"] * 2}})
