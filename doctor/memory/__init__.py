"""The GPU memory estimate: fake-tensor training steps (fake.py, in a child: child.py) and
the verdict against the target GPU (judge.py)."""
