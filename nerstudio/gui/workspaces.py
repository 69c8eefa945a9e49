"""Workspaces: one page per job (Annotate, Inspect, Train, Teach) behind a mode bar.

Each user of the application does one job at a time, and each job needs a few panels, not all of
them. The window's central widget is a :class:`WorkspaceHost`: a vertical mode bar on the left (as
Qt Creator has) and a stack of pages, one per workspace. Parts that several workspaces show — the
corpus browser, the current sentence, the N-best table — are *shared*: there is one widget of
each, and it moves into the active page's :class:`Slot` when the workspace changes (so the
selection, the scroll position and the current sentence are the same everywhere).

The host knows, without asking Qt whether anything is on screen (tests run without showing the
window), which widgets the active workspace holds (:meth:`WorkspaceHost.holds`), and it can bring
any widget forward (:meth:`WorkspaceHost.reveal`: the workspace that holds it, then every tab on
the way down). :class:`PanelTabs` and :class:`WorkspaceHandle` give the controllers the small
tab-widget and dock-widget vocabulary they use (``tabs.setCurrentWidget``,
``training_dock.show()``) on top of that. A :class:`LazyPart` holds the place of a view that is
built on first use (when it is asked for, or its page or tab is first shown). No behaviour of
the application lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)


class Slot(QWidget):
    """Where a shared part sits in one workspace's page (empty while another page holds it)."""

    def __init__(self, part: str, parent=None):
        super().__init__(parent)
        self.part = part
        self.setObjectName(f"slot_{part}")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.stands_for: QWidget | None = None  # the shared part (set by the host)

    def minimumSizeHint(self) -> QSize:
        """While another page holds the part, the room it will need here: a page's minimum
        size is the same whichever page shows the shared parts now."""
        part = self.stands_for
        if part is None or part.parentWidget() is self:
            return super().minimumSizeHint()
        return part.minimumSizeHint().expandedTo(part.minimumSize())

    def take(self, widget: QWidget) -> None:
        if widget.parentWidget() is not self:
            self._layout.addWidget(widget)
        widget.show()


class LazyPart(QWidget):
    """Where a part that is built on first use sits: empty until the part is asked for
    (:meth:`get`) or the holder is first shown (its workspace or tab comes forward), then the
    part, built by ``build``, fills it. ``when_built`` callbacks (the controllers' wiring) run
    once, right after the part is built."""

    def __init__(self, name: str, build, parent=None):
        super().__init__(parent)
        self.setObjectName(f"lazy_{name}")
        self.name = name
        self._build = build
        self.part: QWidget | None = None
        self._then: list = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def get(self) -> QWidget:
        if self.part is None:
            part = self._build()
            self._layout.addWidget(part)
            self.part = part
            then, self._then = self._then, []
            for fn in then:
                fn(part)
        return self.part

    def when_built(self, fn) -> None:
        if self.part is not None:
            fn(self.part)
        else:
            self._then.append(fn)

    def showEvent(self, event) -> None:
        self.get()
        super().showEvent(event)


def unwrap(widget: QWidget | None) -> QWidget | None:
    """The part a holder stands for (built now), or ``widget`` itself."""
    return widget.get() if isinstance(widget, LazyPart) else widget


@dataclass
class Workspace:
    name: str
    title: str
    page: QWidget
    slots: dict[str, Slot]
    action: QAction  # the mode bar's and the View menu's
    scroll: QScrollArea  # what the stack holds: the page, scrollable when the window is small
    button: QToolButton | None = None
    # callables run each time the workspace becomes active
    on_enter: list = field(default_factory=list)
    # the widget the keys go to once the workspace is active (a callable: it may be built late)
    focus: object = None


class ModeBar(QFrame):
    """The vertical bar of workspace buttons: icon above label, one checked."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("modeBar")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAutoFillBackground(True)
        pal = self.palette()
        bar = pal.color(pal.ColorRole.Mid).darker(160)
        pal.setColor(self.backgroundRole(), bar)
        self.setPalette(pal)
        # the style's own hover and checked panels are light: white labels on them were unreadable
        self.setStyleSheet(
            "QToolButton { color: white; border: 1px solid transparent; border-radius: 4px; }"
            f" QToolButton:hover {{ background: {bar.lighter(118).name()}; }}"
            f" QToolButton:checked {{ background: {bar.darker(150).name()};"
            f" border-color: {bar.lighter(170).name()}; }}"
        )
        # no QButtonGroup: the actions' QActionGroup keeps one checked (a button group would
        # trigger the action of the button it unchecks)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(2, 6, 2, 6)
        self._lay.setSpacing(4)
        self._lay.addStretch(1)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)

    def add(self, action: QAction) -> QToolButton:
        b = QToolButton(self)
        b.setDefaultAction(action)
        b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextUnderIcon)
        b.setIconSize(QSize(28, 28))
        b.setAutoRaise(True)
        b.setFixedWidth(self._button_width(b))
        # the mode bar never takes the keys meant for the panels
        b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        b.setObjectName(f"mode_{action.objectName()}")
        pal = b.palette()
        for role in (pal.ColorRole.ButtonText, pal.ColorRole.WindowText):
            pal.setColor(role, Qt.GlobalColor.white)
        b.setPalette(pal)
        self._lay.insertWidget(self._lay.count() - 1, b)
        return b

    def _button_width(self, b: QToolButton) -> int:
        """74 px at the normal size, wider when the zoom makes the label wider."""
        return max(
            74,
            b.fontMetrics().horizontalAdvance(b.text().replace("&", "")) + 16,
            b.iconSize().width() + 16,
        )

    def after_zoom(self) -> None:  # the zoom changed the font (and the icons)
        for b in self.findChildren(QToolButton):
            b.setFixedWidth(self._button_width(b))


def page_scroll(page: QWidget, name: str) -> QScrollArea:
    """``page`` in a scroll area: a page never makes the window larger than its screen; when the
    window is smaller than the page's minimum (a 1024-pixel screen at a large zoom) it scrolls."""
    sc = QScrollArea()
    sc.setObjectName(f"{name}PageScroll")
    sc.setWidget(page)
    sc.setWidgetResizable(True)
    sc.setFrameShape(QFrame.Shape.NoFrame)
    # never the focus (a disabled button's focus must not land here)
    sc.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return sc


class WorkspaceHost(QWidget):
    """The mode bar and the pages; moves the shared parts into the active page."""

    changed = Signal(str)  # the name of the workspace that became active

    def __init__(self, window, settings, parent=None):
        super().__init__(parent)
        self.setObjectName("workspaces")
        self.window_ = window
        self.settings = settings
        self.bar = ModeBar(self)
        self.stack = QStackedWidget(self)
        self.stack.setObjectName("workspaceStack")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.bar)
        lay.addWidget(self.stack, 1)
        self.spaces: dict[str, Workspace] = {}
        self.shared: dict[str, QWidget] = {}
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        self._current = ""

    # -- building -------------------------------------------------------------------------
    def share(self, part: str, widget: QWidget) -> QWidget:
        """Register a part that moves between the pages' slots of the same name."""
        self.shared[part] = widget
        return widget

    def add(
        self,
        name: str,
        title: str,
        icon: QIcon,
        tip: str,
        page: QWidget,
        slots: list[Slot],
        shortcut: str | None = None,
    ) -> Workspace:
        a = QAction(icon, title, self.window_)
        a.setObjectName(name)
        a.setCheckable(True)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        a.setStatusTip(tip)
        a.setToolTip(f"{tip} ({shortcut})" if shortcut else tip)
        a.triggered.connect(lambda _on=False, n=name: self.activate(n))
        self.group.addAction(a)
        for s in slots:
            s.stands_for = self.shared.get(s.part)
        page.setObjectName(f"{name}Workspace")
        ws = Workspace(name, title, page, {s.part: s for s in slots}, a, page_scroll(page, name))
        ws.button = self.bar.add(a)
        self.stack.addWidget(ws.scroll)
        self.spaces[name] = ws
        return ws

    def actions(self) -> list[QAction]:
        return [ws.action for ws in self.spaces.values()]

    # -- switching ------------------------------------------------------------------------
    @property
    def current(self) -> str:
        return self._current

    def activate(self, name: str) -> None:
        ws = self.spaces[name]
        for part, slot in ws.slots.items():
            slot.take(self.shared[part])
        self.stack.setCurrentWidget(ws.scroll)
        ws.action.setChecked(True)
        if name == self._current:
            return
        self._current = name
        self.settings.setValue("window/workspace", name)
        for fn in ws.on_enter:
            fn()
        self._focus_main(ws)
        self.changed.emit(name)

    def _focus_main(self, ws: Workspace) -> None:
        """The keys go to the workspace's main widget: the page that was left may have held the
        focus (a hidden table would swallow the next key), and a shared part that moved keeps
        none."""
        target = ws.focus() if callable(ws.focus) else None
        if isinstance(target, QWidget) and target.focusPolicy() == Qt.FocusPolicy.NoFocus:
            # a panel: its first field in the Tab order
            panel, w = target, target.nextInFocusChain()
            target = None
            while w is not None and w is not panel and panel.isAncestorOf(w):
                if w.focusPolicy() & Qt.FocusPolicy.TabFocus and w.isEnabled() and not w.isHidden():
                    target = w
                    break
                w = w.nextInFocusChain()
        if isinstance(target, QWidget):
            target.setFocus(Qt.FocusReason.OtherFocusReason)

    def restore(self, default: str) -> None:
        name = self.settings.value("window/workspace", default)
        self.activate(name if name in self.spaces else default)

    def workspace_of(self, widget: QWidget) -> str | None:
        """The workspace whose page holds ``widget`` now (shared parts: the active one, if it has
        a slot for them), else the first one with a slot for its shared part."""
        w: QWidget | None = widget
        while w is not None:
            for ws in self.spaces.values():
                if w is ws.page:
                    return ws.name
            for part, shared in self.shared.items():
                if w is shared:
                    current = self.spaces.get(self._current)
                    if current is not None and part in current.slots:
                        return self._current
                    return next((ws.name for ws in self.spaces.values() if part in ws.slots), None)
            w = w.parentWidget()
        return None

    def holds(self, widget: QWidget) -> bool:
        """``widget`` is on the active workspace's page and on the current tab of every tab
        widget above it (whether or not the window is shown)."""
        if self.workspace_of(widget) != self._current:
            return False
        w: QWidget | None = widget
        while w is not None and w is not self.stack:
            parent = w.parentWidget()
            if isinstance(parent, QStackedWidget) and parent.currentWidget() is not w:
                return False
            w = parent
        return True

    def reveal(self, widget: QWidget) -> None:
        """Bring ``widget`` forward: its workspace, then each tab on the way down to it."""
        name = self.workspace_of(widget)
        if name is None:
            return
        self.activate(name)
        w: QWidget | None = widget
        while w is not None and w is not self.stack:
            parent = w.parentWidget()
            tabs = parent.parentWidget() if isinstance(parent, QStackedWidget) else None
            if isinstance(tabs, QTabWidget):
                tabs.setCurrentWidget(w)
            w = parent

    def room_needed(self) -> QSize:
        """The size the host needs so that no page scrolls: the mode bar beside the largest
        minimum of the pages. The parts placed on a page itself (not on a tab) are built for the
        measure: a page not yet visited must fit too."""
        width = height = 0
        for ws in self.spaces.values():
            for lazy in ws.page.findChildren(LazyPart):
                holder = lazy.parentWidget()
                while holder is not None and holder is not ws.page:
                    if isinstance(holder, QTabWidget):
                        break
                    holder = holder.parentWidget()
                else:
                    lazy.get()
            hint = ws.page.minimumSizeHint()
            width, height = max(width, hint.width()), max(height, hint.height())
        bar = self.bar.minimumSizeHint()
        return QSize(width + bar.width(), max(height, bar.height()))

    def handle(self, name: str) -> WorkspaceHandle:
        return WorkspaceHandle(self, name)


class WorkspaceHandle(QObject):
    """A workspace seen as a dock widget: ``show`` / ``raise_`` make it active, ``hide`` goes back
    to the workspace before it, ``visibilityChanged`` tells when it becomes (in)active. Earlier
    versions had docks for training and step-through; their users keep working."""

    visibilityChanged = Signal(bool)

    def __init__(self, host: WorkspaceHost, name: str):
        super().__init__(host)
        self.host, self.name = host, name
        self._previous: str | None = None
        self._was = False
        host.changed.connect(self._on_changed)

    def _on_changed(self, name: str) -> None:
        now = name == self.name
        if not now:
            self._previous = name
        if now != self._was:
            self._was = now
            self.visibilityChanged.emit(now)

    def show(self) -> None:
        self.host.activate(self.name)

    raise_ = show

    def hide(self) -> None:
        if self.host.current == self.name:
            prev = self._previous
            back = (
                prev
                if prev is not None and prev in self.host.spaces and prev != self.name
                else next(n for n in self.host.spaces if n != self.name)
            )
            self.host.activate(back)

    def isVisible(self) -> bool:
        return self.host.current == self.name

    def setVisible(self, on: bool) -> None:
        self.show() if on else self.hide()

    def toggleViewAction(self) -> QAction:
        return self.host.spaces[self.name].action


class PanelTabs(QObject):
    """The tab widgets of all workspaces seen as one: ``currentWidget()`` is the panel on the
    current tab of the active workspace's tab widget (None if it has none), ``setCurrentWidget(w)``
    reveals ``w`` wherever it lives, ``currentChanged`` fires when either changes."""

    currentChanged = Signal(int)

    def __init__(self, host: WorkspaceHost):
        super().__init__(host)
        self.host = host
        self._tabs: list[QTabWidget] = []
        host.changed.connect(lambda _n: self.currentChanged.emit(-1))

    def add(self, tabs: QTabWidget) -> QTabWidget:
        self._tabs.append(tabs)
        tabs.currentChanged.connect(self.currentChanged.emit)
        return tabs

    def currentWidget(self) -> QWidget | None:
        for t in self._tabs:
            if self.host.holds(t):
                return unwrap(t.currentWidget())
        return None

    def setCurrentWidget(self, widget: QWidget) -> None:
        self.host.reveal(widget)
