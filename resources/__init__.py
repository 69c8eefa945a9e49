"""nerstudio's data files, installed as the package ``nerstudio.resources.files``.

``lists/`` holds the bundled gazetteers, ``clusters/`` the Brown word clusters (each with its
sources and licence), ``desktop/`` the icon, the launcher entry and the AppStream metainfo. They
live at the top of the source tree, apart from the code, so that packagers and translators find
them; ``setup.py`` maps this folder into the package, so the wheel carries it and an editable
install finds it. The code that reads them is :mod:`nerstudio.resources`.
"""
