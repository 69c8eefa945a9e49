#!/usr/bin/env python3
"""Launch the nerstudio desktop application.

    python main.py                 # the bundled demo corpus
    python main.py CORPUS          # any corpus file nerstudio reads
    python main.py --screenshot out.png   # render the window (offscreen) and exit
"""

import sys

from nerstudio.gui.app import main

if __name__ == "__main__":
    sys.exit(main())
