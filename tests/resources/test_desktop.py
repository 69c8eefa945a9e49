"""The application's place on a desktop: icon sizes, the launcher entry, AppStream metainfo,
``nerstudio install-desktop`` and the window's icon."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from nerstudio.resources import desktop


def png_size(path):
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def read_entry(text):
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str  # keys are case-sensitive
    cp.read_string(text)
    return cp["Desktop Entry"]


def test_every_icon_size_is_shipped_at_its_size():
    assert desktop.ICON_SVG.is_file()
    for size in desktop.ICON_SIZES:
        assert png_size(desktop.icon_png(size)) == (size, size)


def test_entry_and_metainfo_name_one_application():
    entry = read_entry(desktop.desktop_entry(["/opt/ner studio/bin/nerstudio-gui"]))
    assert entry["Type"] == "Application" and entry["Icon"] == desktop.APP_ID
    # a path with a space is quoted as the desktop-entry spec says; %f passes the file opened
    assert entry["Exec"] == '"/opt/ner studio/bin/nerstudio-gui" %f'
    meta = ET.parse(desktop.METAINFO_FILE).getroot()
    assert meta.findtext("id") == desktop.APP_ID
    assert meta.find("launchable").text == f"{desktop.APP_ID}.desktop" == desktop.DESKTOP_FILE.name


def test_install_and_uninstall(tmp_path):
    written = desktop.install(tmp_path, ["/usr/bin/nerstudio-gui"])
    assert sorted(written) == sorted(desktop.targets(tmp_path))
    entry = read_entry((tmp_path / "applications" / f"{desktop.APP_ID}.desktop").read_text())
    assert entry["Exec"] == "/usr/bin/nerstudio-gui %f"
    icon = tmp_path / "icons" / "hicolor" / "48x48" / "apps" / f"{desktop.APP_ID}.png"
    assert png_size(icon) == (48, 48)
    assert (
        tmp_path / "icons/hicolor/scalable/apps" / f"{desktop.APP_ID}.svg"
    ).read_bytes() == desktop.ICON_SVG.read_bytes()
    removed = desktop.uninstall(tmp_path)
    assert sorted(removed) == sorted(written) and not any(p.exists() for p in written)


def test_cli_installs_under_the_prefix(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "nerstudio", "install-desktop", "--prefix", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "metainfo" / f"{desktop.APP_ID}.metainfo.xml").is_file()
    entry = read_entry((tmp_path / "applications" / f"{desktop.APP_ID}.desktop").read_text())
    assert "nerstudio" in entry["Exec"]


def test_xdg_data_home_rule(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert desktop.data_home() == tmp_path
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # not absolute: ignored, as the spec says
    assert desktop.data_home().parts[-2:] == (".local", "share")


@pytest.mark.skipif(
    not shutil.which("desktop-file-validate"),
    reason="desktop-file-validate not installed (Debian: desktop-file-utils)",
)
def test_entry_passes_desktop_file_validate(tmp_path):
    desktop.install(tmp_path, ["/usr/bin/nerstudio-gui"])
    out = subprocess.run(
        ["desktop-file-validate", str(tmp_path / "applications" / f"{desktop.APP_ID}.desktop")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "error" not in out.stdout.lower(), out.stdout + out.stderr


@pytest.mark.skipif(
    not shutil.which("appstreamcli"), reason="appstreamcli not installed (Debian: appstream)"
)
def test_metainfo_passes_appstreamcli():
    out = subprocess.run(
        ["appstreamcli", "validate", "--no-net", "--pedantic", str(desktop.METAINFO_FILE)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_window_icon(qapp):
    from nerstudio.gui.app import set_app_icon

    set_app_icon(qapp)
    icon = qapp.windowIcon()
    assert not icon.isNull()
    assert max(s.width() for s in icon.availableSizes()) == max(desktop.ICON_SIZES)
