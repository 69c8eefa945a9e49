"""What pyproject.toml cannot say: the top-level ``resources/`` folder (data files only) is
installed as the package ``nerstudio.resources.files``, beside the packages under ``nerstudio/``.
Everything else about the package is in pyproject.toml. Folders of data count as namespace
packages, as pyproject's own package finder counts them."""

from setuptools import find_namespace_packages, setup

NOT_CODE = ["*__pycache__*"]
FILES = "nerstudio.resources.files"

setup(
    packages=[
        *find_namespace_packages(include=["nerstudio", "nerstudio.*"], exclude=NOT_CODE),
        FILES,
        *(f"{FILES}.{p}" for p in find_namespace_packages(where="resources", exclude=NOT_CODE)),
    ],
    package_dir={FILES: "resources"},
)
