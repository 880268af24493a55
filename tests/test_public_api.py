"""The public surface is exactly what `dagtools/__init__.py` exports."""

import dagtools


def test_exported_members_are_sorted_and_exist():
    assert dagtools.__all__ == sorted(dagtools.__all__)
    for name in dagtools.__all__:
        assert hasattr(dagtools, name), name
    public = {n for n in vars(dagtools) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(dagtools, n)).__name__ == "module"}
    assert public - modules == set(dagtools.__all__)
