"""The audit registry: every audit by name, its plugin imported only when asked for (`list` stays light)."""

from __future__ import annotations

from typing import Any

from audit_lib.errors import UnknownAuditError
from audit_lib.plugin import AuditPlugin, load_plugin_attribute

# name -> (module defining the plugin, attribute), or the plugin itself. MBPP+ is the HumanEval+ audit on MBPP+.
_REGISTRY: dict[str, tuple[str, str] | AuditPlugin[Any, Any]] = {
    "codeinsights_edge_case": ("audit_lib.benchmarks.codeinsights.audit", "AUDIT"),
    "data_inventory": ("audit_lib.benchmarks.data_inventory.audit", "AUDIT"),
    "harness_exploits": ("audit_lib.benchmarks.harness_exploits.audit", "AUDIT"),
    "humaneval_plus": ("audit_lib.benchmarks.humaneval_plus.audit", "AUDIT"),
    "impossible_lcb": ("audit_lib.benchmarks.impossible_lcb.audit", "AUDIT"),
    "intentspec": ("audit_lib.benchmarks.intentspec.audit", "AUDIT"),
    "mbpp_plus": ("audit_lib.benchmarks.humaneval_plus.audit", "MBPP_AUDIT"),
    "unconventional_problems": ("audit_lib.benchmarks.unconventional.audit", "AUDIT"),
}


def names() -> tuple[str, ...]:
    """Every registered audit, sorted."""
    return tuple(sorted(_REGISTRY))


def load(name: str) -> AuditPlugin[Any, Any]:
    """The audit's plugin (imports its package)."""
    if name not in _REGISTRY:
        raise UnknownAuditError(f"unknown audit {name!r}; known audits: {', '.join(names())}", audit=name)
    entry = _REGISTRY[name]
    return entry if isinstance(entry, AuditPlugin) else load_plugin_attribute(*entry)


def register(name: str, plugin: str | AuditPlugin[Any, Any], attribute: str = "AUDIT") -> None:
    """Add an audit defined outside this package: a module path holding `attribute`, or the plugin itself."""
    _REGISTRY[name] = plugin if isinstance(plugin, AuditPlugin) else (plugin, attribute)


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


__all__ = ["load", "names", "register", "unregister"]
