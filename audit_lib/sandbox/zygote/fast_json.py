"""`json.dumps` and `json.loads` of bytes, the same results without their per-call set-up (stdlib only).

Call mode prints and parses one small JSON text per input, in the job, the judge, the zygote and the parent: there
`json.dumps` costs more in making its encoder than in printing (2.2 us against 0.7 us for an int, measured), and
`json.loads` of bytes more in its encoding detection than in parsing a short text.
"""

from __future__ import annotations

import json
from typing import Any

_make_encoder = getattr(json.encoder, "c_make_encoder", None)
# `json.dumps`'s defaults (separators ", " and ": ", ASCII, NaN allowed, no sorting); no circular-reference check:
# what is printed here is a tree (tagged values, records, exception fields).
_chunks = _make_encoder(None, None, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True) \
    if _make_encoder is not None else None
_json_dumps, _json_loads = json.dumps, json.loads


def dumps(value: Any) -> str:
    """`json.dumps(value)` for a value made of JSON types only (a tuple prints as a list, as there)."""
    if _chunks is None:
        return _json_dumps(value)
    return "".join(_chunks(value, 0))


def loads_bytes(text: bytes) -> Any:
    """`json.loads(text)`: UTF-8 when its first two bytes are ASCII and not NUL, as `json.detect_encoding` decides."""
    if len(text) >= 2 and 0 < text[0] < 0x80 and text[1]:
        return _json_loads(text.decode("utf-8", "surrogatepass"))
    return _json_loads(text)
