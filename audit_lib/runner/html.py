"""The self-contained HTML export of an executed notebook: alerts and legend first, evidence embedded."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from audit_lib.atomic_files import atomic_write_text

REPORT_TEMPLATE_NAME = "benchaudit_report.html.j2"
# The lab template, without the scripts it loads from CDNs: a report must open offline without console errors.
REPORT_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""
PATH_REPR = re.compile(r"^(?:Posix|Windows)?Path\('.*'\)$", re.DOTALL)
HEADING = re.compile(r"^#\s+(.+)$", re.MULTILINE)
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def export_html(notebook_path: Path, html_path: Path, *, with_code: bool, title: str,
                findings_path: Path | None = None, display_title: str | None = None) -> Path:
    """A self-contained HTML report: images and evidence inline, code hidden unless `with_code`.

    `title` is the audit's name, `display_title` its plugin's title when the caller has it; the findings default to
    `<notebook stem>.findings.json` beside the notebook."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    from audit_lib.report.export import report_parts

    exporter = HTMLExporter(template_name="lab", extra_loaders=[jinja2.DictLoader({REPORT_TEMPLATE_NAME:
                                                                                   REPORT_TEMPLATE})])
    exporter.template_file = REPORT_TEMPLATE_NAME
    exporter.exclude_input = not with_code
    exporter.exclude_input_prompt = not with_code
    exporter.exclude_output_prompt = True
    exporter.embed_images = True
    notebook = nbformat.read(str(notebook_path), as_version=4)
    findings_path = findings_path or notebook_path.with_name(f"{notebook_path.stem}.findings.json")
    findings = json.loads(findings_path.read_text(encoding="utf-8")) if findings_path.is_file() else None
    heading = _take_heading(notebook)
    shown_title = report_title(title, heading, findings, plugin_title=display_title)
    clean_outputs(notebook)
    notebook.metadata["title"] = f"benchaudit · {shown_title}"
    body, _ = exporter.from_notebook_node(notebook, resources={"metadata": {"name": shown_title}})
    parts = report_parts(findings, findings_path.parent, title=shown_title, audit=title, body=body)
    for slot, content in parts.slots.items():
        body = body.replace(slot, content)
    # The header needs the exported body (which checks have a slot), so it is spliced in after the export.
    body = body.replace("<main>", "<main>" + parts.header, 1)
    body = _replace_last(body, "</main>", parts.footer + "</main>")
    atomic_write_text(html_path, body)
    return html_path


def report_title(audit: str, heading: str | None, findings: dict[str, Any] | None, *,
                 plugin_title: str | None = None) -> str:
    """The report's title: the registered plugin's for the findings' parameters, else `plugin_title`.

    Without either, the notebook's heading, naming the audit when the notebook serves several."""
    try:
        from audit_lib import benchmarks

        plugin = benchmarks.load(audit)
    except Exception:  # an unregistered or not yet converted audit: fall back to the notebook
        plugin = None
    if plugin is not None:
        return str(plugin.title_for((findings or {}).get("params") or {}))
    if plugin_title:
        return plugin_title
    if not heading:
        return audit
    shared = findings is not None and findings.get("notebook_audit") not in (None, audit)
    return f"{heading} — {audit}" if shared else heading


def _take_heading(notebook: Any) -> str | None:
    """The first markdown cell's `# heading`, removed from the cell: the report's own title replaces it."""
    for cell in notebook.cells:
        if cell.get("cell_type") != "markdown":
            continue
        match = HEADING.search(str(cell.source))
        if match is None or not str(cell.source).lstrip().startswith("#"):
            return None
        cell.source = str(cell.source).replace(match.group(0), "", 1).lstrip("\n")
        return match.group(1).replace("`", "").strip()  # the title is plain text
    return None


def clean_outputs(notebook: Any) -> None:
    """Drop what a reader should not see from a notebook's outputs.

    Stderr (warnings and text progress bars), progress-bar widgets and their state, and the path `write()` returns as a
    cell's last value go; a bare dict shows as `key: value` lines; machine paths are shortened."""
    from audit_lib.report.values import redact_paths, value_lines

    notebook.metadata.pop("widgets", None)  # widget state would make the export load a widget manager from a CDN
    for cell in notebook.cells:
        kept = []
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                if output.get("name") == "stderr":
                    continue
                output["text"] = redact_paths(str(output.get("text", "")))
            elif kind in ("execute_result", "display_data"):
                data = output.get("data", {})
                if WIDGET_MIME in data:  # a tqdm.auto bar drawn when the notebook ran outside the runner
                    continue
                plain = str(data.get("text/plain", ""))
                if "text/html" not in data and PATH_REPR.match(plain.strip()):
                    continue
                if "text/html" not in data and plain.startswith("{"):
                    literal = _literal(plain)
                    if isinstance(literal, dict):
                        data["text/html"] = f'<div class="ba">{value_lines(literal)}</div>'
                for mime in ("text/html", "text/plain", "text/markdown"):
                    if mime in data:
                        data[mime] = redact_paths(str(data[mime]))
            elif kind == "error":
                output["traceback"] = [redact_paths(str(line)) for line in output.get("traceback", [])]
                output["evalue"] = redact_paths(str(output.get("evalue", "")))
            kept.append(output)
        if "outputs" in cell:
            cell["outputs"] = kept


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _replace_last(text: str, old: str, new: str) -> str:
    head, found, tail = text.rpartition(old)
    return head + new + tail if found else text + new
