"""A kube-scheduler configuration (`--scheduler-config`), as kube-scheduler v1.36 reads it:
decoded strictly, defaulted and validated (`decode.py`, `defaults.py`, `validation.py`), each
profile expanded to the plugins that run at each extension point with their weights and args
(`framework.py`). `sched.profile` builds kresched's plugins from that. Pure: the caller reads
the file.
"""

from __future__ import annotations

from typing import Any

from kresched.sched.config.decode import ConfigError, decode_scheduler_config
from kresched.sched.config.framework import IN_TREE, expand_profiles
from kresched.sched.config.types import DEFAULT_SCHEDULER_NAME, ProfileSpec, SchedulerConfig

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "IN_TREE",
    "ConfigError",
    "ProfileSpec",
    "SchedulerConfig",
    "parse_scheduler_config",
]


def parse_scheduler_config(doc: Any) -> tuple[SchedulerConfig, tuple[ProfileSpec, ...]]:
    """The configuration a parsed `--config` document describes and its profiles as they run;
    `ConfigError` (one line naming the field) where kube-scheduler would refuse to start."""
    cfg = decode_scheduler_config(doc)
    return cfg, expand_profiles(cfg)
