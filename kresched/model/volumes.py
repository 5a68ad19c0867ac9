"""Volume sources a pod or a PersistentVolume names that the scheduler's volume plugins inspect:
the in-tree disk types VolumeRestrictions still checks for conflicts and NodeVolumeLimits translates
to CSI, and a pod volume's claim. Only the fields those plugins read. No I/O.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "AWSElasticBlockStoreVolumeSource",
    "AzureDiskVolumeSource",
    "CinderVolumeSource",
    "GCEPersistentDiskVolumeSource",
    "ISCSIVolumeSource",
    "PersistentVolumeClaimVolumeSource",
    "RBDVolumeSource",
]

_Base: dict[str, Any] = {"frozen": True, "gc": False, "rename": "camel", "omit_defaults": True}


class PersistentVolumeClaimVolumeSource(msgspec.Struct, **_Base):
    claim_name: str = ""
    read_only: bool = False


class AWSElasticBlockStoreVolumeSource(msgspec.Struct, **_Base):
    volume_id: str = msgspec.field(default="", name="volumeID")
    read_only: bool = False


class GCEPersistentDiskVolumeSource(msgspec.Struct, **_Base):
    pd_name: str = ""
    read_only: bool = False


class AzureDiskVolumeSource(msgspec.Struct, **_Base):
    disk_name: str = ""
    disk_uri: str = msgspec.field(default="", name="diskURI")
    read_only: bool | None = None


class CinderVolumeSource(msgspec.Struct, **_Base):
    volume_id: str = msgspec.field(default="", name="volumeID")
    read_only: bool = False


class ISCSIVolumeSource(msgspec.Struct, **_Base):
    target_portal: str = ""
    iqn: str = ""
    lun: int = 0
    read_only: bool = False


class RBDVolumeSource(msgspec.Struct, **_Base):
    monitors: tuple[str, ...] = ()
    image: str = ""
    #: The API defaults an empty pool to `rbd`.
    pool: str = "rbd"
    read_only: bool = False


