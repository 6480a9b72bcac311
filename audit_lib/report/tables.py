"""Evidence tables: width-bounded with their own scrollbar, sortable by a header click, filterable by a text box.

The behaviour is a few lines of inline JS (`TABLE_SCRIPT`) that a page includes once; it listens on the document,
so tables shown later (notebook outputs) work too, and a page without it still shows plain tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.report.values import cell_markup, esc

FILTER_FROM_ROWS = 6  # smaller tables are read at a glance
TABLE_CELL_LIMIT = 160  # longer cell text is cut, whole in its tooltip (and in the evidence download)

TABLE_STYLE = """
.ba .table-wrap{max-width:100%;overflow-x:auto;margin:4px 0}
.ba .table-wrap table{margin:0}
.ba table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}
.ba table.sortable th[aria-sort=ascending]::after{content:" \\25B2";font-size:9px}
.ba table.sortable th[aria-sort=descending]::after{content:" \\25BC";font-size:9px}
.ba input.table-filter{font:12px system-ui,sans-serif;padding:2px 6px;margin:2px 0;width:18em;
  border:1px solid #d0d7de;border-radius:4px}
.ba td.num{text-align:right!important;font-variant-numeric:tabular-nums}
"""

# Sort on a header click (numbers by `data-v`, else text), toggling the direction; filter rows by a text box.
TABLE_SCRIPT = """<script>
(function(){
if(window.__baTables)return;window.__baTables=true;
function key(td){if(!td)return '';var v=td.getAttribute('data-v');
 return v!==null&&v!==''&&!isNaN(v)?+v:td.textContent.trim().toLowerCase();}
document.addEventListener('click',function(e){
 var th=e.target.closest&&e.target.closest('table.sortable thead th');if(!th)return;
 var table=th.closest('table'),body=table.tBodies[0],col=Array.prototype.indexOf.call(th.parentNode.children,th);
 var asc=th.getAttribute('aria-sort')!=='ascending';
 Array.prototype.forEach.call(th.parentNode.children,function(h){h.removeAttribute('aria-sort');});
 th.setAttribute('aria-sort',asc?'ascending':'descending');
 var rows=Array.prototype.slice.call(body.rows);
 rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);
  if(typeof x!==typeof y){x=String(x);y=String(y);}return (x<y?-1:x>y?1:0)*(asc?1:-1);});
 rows.forEach(function(r){body.appendChild(r);});
});
document.addEventListener('input',function(e){
 var box=e.target;if(!box.classList||!box.classList.contains('table-filter'))return;
 var table=box.parentNode.querySelector('table'),needle=box.value.trim().toLowerCase();
 Array.prototype.forEach.call(table.tBodies[0].rows,function(r){
  r.style.display=!needle||r.textContent.toLowerCase().indexOf(needle)>=0?'':'none';});
});
})();
</script>"""


def rows_and_columns(data: Any) -> tuple[list[Mapping[str, Any]], list[str] | None]:
    """Rows as mappings and, when the source knows them, the column order (pandas, polars, rows, a mapping)."""
    if hasattr(data, "to_dicts") and hasattr(data, "columns"):  # polars
        return list(data.to_dicts()), [str(c) for c in data.columns]
    if hasattr(data, "to_dict") and hasattr(data, "columns") and hasattr(data, "index"):  # pandas
        frame = data
        named_index = any(name is not None for name in getattr(frame.index, "names", [None]))
        if named_index:
            frame = frame.reset_index()
        return frame.to_dict(orient="records"), [str(c) for c in frame.columns]
    if isinstance(data, Mapping):
        return [{"key": k, "value": v} for k, v in data.items()], ["key", "value"]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        rows = []
        for row in data:
            if dataclasses.is_dataclass(row) and not isinstance(row, type):
                rows.append(dataclasses.asdict(row))
            elif isinstance(row, Mapping):
                rows.append(row)
            else:
                raise TypeError(f"show_table: row {len(rows) + 1} is a {type(row).__name__}, not a mapping")
        return rows, None
    raise TypeError(f"show_table: cannot tabulate a {type(data).__name__}")


def column_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        for key in row:
            if str(key) not in columns:
                columns.append(str(key))
    return columns


def table_markup(rows: Sequence[Mapping[str, Any]], *, columns: list[str] | None = None,
                 caption: str | None = None, css_class: str = "data", total: int | None = None) -> str:
    """A sortable table in its own horizontal scroll box, with a filter box when it has enough rows.

    Evidence rows of different shapes (different keys) become one table per shape: in one table each shape's
    rows would be mostly empty cells."""
    if not rows:  # a caption on an empty table renders as a one-word-wide column
        return f'<p class="note"><b>{esc(caption)}</b></p>' if caption else ""
    if columns is None:
        shapes: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
        for row in rows:
            shapes.setdefault(tuple(str(k) for k in row), []).append(row)
        if len(shapes) > 1:
            return "".join(_one_table(group, list(shape), caption if index == 0 else None, css_class, None)
                           for index, (shape, group) in enumerate(shapes.items()))
    return _one_table(rows, columns if columns is not None else column_names(rows), caption, css_class, total)


def _one_table(rows: Sequence[Mapping[str, Any]], columns: list[str], caption: str | None, css_class: str,
               total: int | None) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for row in rows:
        lookup = {str(k): v for k, v in row.items()}
        body.append("<tr>" + "".join(cell_markup(lookup.get(c), TABLE_CELL_LIMIT) for c in columns) + "</tr>")
    caption_markup = f'<p class="caption"><b>{esc(caption)}</b></p>' if caption else ""
    shown = len(rows) if total is None else total
    box = (f'<input class="table-filter" type="search" placeholder="filter {shown:,} rows…" '
           'aria-label="filter rows">' if len(rows) >= FILTER_FROM_ROWS else "")
    return (f'{caption_markup}<div class="table-wrap">{box}<table class="{esc(css_class)} sortable">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


__all__ = ["TABLE_SCRIPT", "TABLE_STYLE", "rows_and_columns", "column_names", "table_markup"]
