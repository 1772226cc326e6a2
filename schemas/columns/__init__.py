"""Avro values decoded column-wise, a batch at a time, each row only where ``Codec.decode`` would decode it.

The detect worker's samples stage and the lake archiver both read through this one decoder; a row it
does not take is decoded one by one by the caller, which then decodes it or says why not.
"""

from schemas.columns.decoder import ColumnDecoder, Columns, SubjectReader
from schemas.columns.plan import UnsupportedSchemaError
from schemas.columns.reader import items_mask
from schemas.columns.table import TableBuilder

__all__ = [
    "ColumnDecoder",
    "Columns",
    "SubjectReader",
    "TableBuilder",
    "UnsupportedSchemaError",
    "items_mask",
]
