"""Bounded readers of artifacts on disk, each proven against the real tool: rsync's
filter rules (rsync.py), torch.save files (torchsave.py), cache trees
(cachescan.py) and git's index and history (git.py)."""
