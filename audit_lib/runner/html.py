"""The self-contained HTML export of an executed notebook."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from audit_lib.atomic_files import atomic_write_text

REPORT_TEMPLATE_NAME = "benchaudit_report.html.j2"
# The lab template, without the scripts it loads from CDNs: a report must open offline without console errors.
REPORT_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block body_header -%}
{{ super() }}
<nav style="font:13px system-ui,sans-serif;padding:6px 12px;border-bottom:1px solid #d0d7de">
<a href="index.html">&larr; all audits</a> &middot; {{ resources.benchaudit_nav | escape }}</nav>
{%- endblock body_header -%}
"""


def export_html(notebook_path: Path, html_path: Path, *, with_code: bool, title: str) -> Path:
    """A self-contained HTML report: images inline, no external scripts, code hidden unless `with_code`."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", extra_loaders=[jinja2.DictLoader({REPORT_TEMPLATE_NAME:
                                                                                   REPORT_TEMPLATE})])
    exporter.template_file = REPORT_TEMPLATE_NAME
    exporter.exclude_input = not with_code
    exporter.exclude_input_prompt = not with_code
    exporter.exclude_output_prompt = True
    exporter.embed_images = True
    notebook = nbformat.read(str(notebook_path), as_version=4)
    notebook.metadata["title"] = f"benchaudit · {title}"
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    resources = {"metadata": {"name": title}, "benchaudit_nav": f"audit {title} · generated {generated}"}
    body, _ = exporter.from_notebook_node(notebook, resources=resources)
    atomic_write_text(html_path, body)
    return html_path
