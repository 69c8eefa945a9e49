"""The application names the system packages Qt's X11 plugin needs instead of aborting."""

from nerstudio.gui.platform_check import XCB_LIBRARIES, missing_packages, uses_xcb, xcb_problem


def test_a_missing_library_is_named_by_its_package():
    msg = xcb_problem(
        environ={"DISPLAY": ":0"}, platform="linux", loads=lambda lib: lib != "libxcb-cursor.so.0"
    )
    assert "sudo apt install libxcb-cursor0" in msg
    assert "QT_QPA_PLATFORM=offscreen" in msg


def test_nothing_missing_or_not_xcb_says_nothing():
    assert xcb_problem(environ={"DISPLAY": ":0"}, platform="linux", loads=lambda lib: True) is None
    none_load = lambda lib: False
    assert (
        xcb_problem(environ={"QT_QPA_PLATFORM": "offscreen"}, platform="linux", loads=none_load)
        is None
    )
    assert xcb_problem(environ={}, platform="darwin", loads=none_load) is None
    assert (
        xcb_problem(environ={"WAYLAND_DISPLAY": "wayland-0"}, platform="linux", loads=none_load)
        is None
    )


def test_every_library_maps_to_one_package():
    assert missing_packages(lambda lib: False) == sorted(set(XCB_LIBRARIES.values()))
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb:foo"}, "linux")
