"""The lake's storage: a root on a pyarrow filesystem (local folder by default, or any URI pyarrow knows).

Every write is atomic for readers: bytes go to a hidden temp file beside the target, then one
rename publishes them. Paths handed around the lake package are POSIX paths relative to the root.
"""

from __future__ import annotations

import contextlib
import json
import posixpath
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from analytics.errors import LakeError

TEMP_SUFFIX = ".tmp"


def is_hidden(name: str) -> bool:
    """Temp files and lake metadata (``.x``, ``_x``) are never data."""
    return name.startswith((".", "_"))


class LakeFS:
    """A lake root on a filesystem; ``rel`` arguments are POSIX paths relative to the root."""

    def __init__(self, root: str | Path, filesystem: pafs.FileSystem | None = None) -> None:
        root = str(root)
        if filesystem is not None:
            self.fs, self.base = filesystem, root.rstrip("/")
        elif "://" in root:
            try:
                self.fs, self.base = pafs.FileSystem.from_uri(root)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
                raise LakeError(f"unsupported lake URI: {exc}", root) from exc
            self.base = self.base.rstrip("/")
        else:
            self.fs, self.base = pafs.LocalFileSystem(), str(Path(root).expanduser().absolute())
        self.root = root
        self.is_local = isinstance(self.fs, pafs.LocalFileSystem)

    def __repr__(self) -> str:
        return f"LakeFS({self.root!r})"

    def full(self, rel: str = "") -> str:
        """Path of ``rel`` on the filesystem (what pyarrow calls take)."""
        return posixpath.join(self.base, rel) if rel else self.base

    def uri(self, rel: str) -> str:
        """A string other readers (Polars) accept: a local path, or the URI form of the root."""
        if self.is_local:
            return self.full(rel)
        if "://" in self.root:
            return posixpath.join(self.root.rstrip("/"), rel)
        return self.full(rel)

    # -- reading -----------------------------------------------------------------------------

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full(rel)).type != pafs.FileType.NotFound

    def files(self, rel: str = "", *, recursive: bool = True) -> list[str]:
        """Relative paths of the files under ``rel`` (empty when it does not exist), sorted."""
        selector = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=recursive)
        try:
            infos = self.fs.get_file_info(selector)
        except OSError as exc:
            raise LakeError(f"cannot list the lake: {exc}", self.full(rel)) from exc
        prefix = self.base + "/"
        return sorted(i.path[len(prefix) :] for i in infos if i.type == pafs.FileType.File)

    def dirs(self, rel: str = "") -> list[str]:
        """Names of the direct sub-folders of ``rel``, sorted."""
        selector = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=False)
        infos = self.fs.get_file_info(selector)
        return sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory)

    def read_bytes(self, rel: str) -> bytes:
        try:
            with self.fs.open_input_stream(self.full(rel)) as stream:
                return bytes(stream.read())
        except (OSError, pa.ArrowException) as exc:
            raise LakeError(f"cannot read: {exc}", self.full(rel)) from exc

    def read_json(self, rel: str) -> Any:
        try:
            return json.loads(self.read_bytes(rel))
        except json.JSONDecodeError as exc:
            raise LakeError(f"not valid JSON: {exc}", self.full(rel)) from exc

    def read_parquet(self, rel: str, schema: pa.Schema | None = None) -> pa.Table:
        try:
            return pq.read_table(self.full(rel), filesystem=self.fs, schema=schema)
        except (OSError, pa.ArrowException) as exc:
            raise LakeError(f"cannot read Parquet: {exc}", self.full(rel)) from exc

    def parquet_rows(self, rel: str) -> int:
        with self.fs.open_input_file(self.full(rel)) as f:
            return int(pq.ParquetFile(f).metadata.num_rows)

    # -- writing (atomic) --------------------------------------------------------------------

    def _temp_for(self, rel: str) -> str:
        head, name = posixpath.split(rel)
        return posixpath.join(head, f".{name}.{uuid.uuid4().hex[:12]}{TEMP_SUFFIX}")

    def _publish(self, rel: str, write: Any) -> None:
        head = posixpath.dirname(rel)
        temp = self._temp_for(rel)
        try:
            if head:
                self.fs.create_dir(self.full(head), recursive=True)
            write(self.full(temp))
            self.fs.move(self.full(temp), self.full(rel))
        except (OSError, pa.ArrowException) as exc:
            self._discard(temp)
            raise LakeError(f"cannot write: {exc}", self.full(rel)) from exc

    def _discard(self, rel: str) -> None:
        with contextlib.suppress(OSError, pa.ArrowException):
            self.fs.delete_file(self.full(rel))

    def write_bytes(self, rel: str, data: bytes) -> None:
        def write(path: str) -> None:
            with self.fs.open_output_stream(path) as out:
                out.write(data)

        self._publish(rel, write)

    def write_json(self, rel: str, obj: Any) -> None:
        self.write_bytes(rel, json.dumps(obj, indent=1, sort_keys=True, default=str).encode())

    def write_parquet(
        self, rel: str, table: pa.Table, *, compression: str = "zstd", row_group_size: int | None = None
    ) -> None:
        def write(path: str) -> None:
            pq.write_table(
                table, path, filesystem=self.fs, compression=compression, row_group_size=row_group_size
            )

        self._publish(rel, write)

    def delete(self, rel: str) -> None:
        """Delete one file; a file already gone is fine (recovery may run twice)."""
        try:
            self.fs.delete_file(self.full(rel))
        except FileNotFoundError:
            pass
        except (OSError, pa.ArrowException) as exc:
            if self.exists(rel):
                raise LakeError(f"cannot delete: {exc}", self.full(rel)) from exc

    def delete_empty_dirs(self, rel: str) -> None:
        """Remove folders left empty under ``rel`` (after compaction or reconcile)."""
        for sub in self.dirs(rel):
            child = posixpath.join(rel, sub) if rel else sub
            self.delete_empty_dirs(child)
            if not self.files(child) and not self.dirs(child):
                with contextlib.suppress(OSError, pa.ArrowException):
                    self.fs.delete_dir(self.full(child))

    def temp_files(self, rel: str = "") -> Iterator[str]:
        """Leftover temp files of interrupted writes under ``rel``."""
        for path in self.files(rel):
            name = posixpath.basename(path)
            if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                yield path


def temp_target(temp_rel: str) -> str:
    """The final name a temp file was going to get (``.x.parquet.abc.tmp`` → ``x.parquet``)."""
    head, name = posixpath.split(temp_rel)
    inner = name[1 : -len(TEMP_SUFFIX)]
    inner = inner.rsplit(".", 1)[0]
    return posixpath.join(head, inner)
