"""gpu-memory-estimate takes the job's own batch from the DataLoader factory (`--data` /
`smoke.data`): its shapes, dtypes and structure, read without a worker, fed to the model as
its forward's signature says, and "cannot estimate" where the structure leaves that open."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, one_line_exit_2, result_of, run_doctor, validate_report

torch = pytest.importorskip("torch")

FIXTURES = ROOT / "fixtures" / "gpu-memory-estimate"
ID = "gpu-memory-estimate"
SEQ = 1024


def copy(case: str, tmp_path: Path, name: str = "") -> Path:
    repo = tmp_path / (name or case)
    shutil.copytree(FIXTURES / case, repo, ignore=shutil.ignore_patterns("case.yaml"))
    return repo


def run(repo: Path, *args: str, env: dict | None = None):
    out = repo.parent / f"{repo.name}-{len(list(repo.parent.glob('*.json')))}.json"
    proc = run_doctor("run", "--repo", str(repo), "--only", ID, "--json", str(out), *args,
                      env=env, timeout=180)
    doc = validate_report(json.loads(out.read_text()))
    return proc, result_of(doc, ID), doc["facts"].get("gpu_memory_estimate")


LM_DATA = '''"""(input ids, labels) token batches, as a language-model job's loader yields them."""
import torch
from torch.utils.data import DataLoader, Dataset


class Tokens(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ids = torch.randint(0, 32000, (1025,))
        return ids[:-1], ids[1:]


def mark(worker_id):
    open(__file__ + ".worker", "a").close()


def loader(batch_size):
    return DataLoader(Tokens(), batch_size=batch_size, num_workers=2, prefetch_factor=2,
                      worker_init_fn=mark)


def small():
    return loader(2)


def large():
    return loader(8)
'''


def test_llm_token_batches_from_data_set_the_estimate(tmp_path):
    """(B, S) int64 ids and labels from --data: B is the loader's, the step is model(ids),
    and the peak is the model factory's own batch of B sequences plus the labels."""
    repo = copy("pass_batch_fits_h100", tmp_path)
    (repo / "lm" / "data.py").write_text(LM_DATA)
    got = {}
    for name, b in (("small", 2), ("large", 8)):
        proc, res, facts = run(repo, "--data", f"lm.data:{name}")
        assert proc.returncode == 0 and res["status"] == "pass", proc.stdout + proc.stderr
        assert facts["batch"] == {
            "source": f"--data lm.data:{name}",
            "fed": "model(batch[0]); batch[1] as the target",
            "tensors": [{"name": "0", "shape": [b, SEQ], "dtype": "int64"},
                        {"name": "1", "shape": [b, SEQ], "dtype": "int64"}]}
        assert facts["batch_size"] == b
        assert facts["breakdown_bytes"]["batch"] == 2 * b * SEQ * 8
        assert (f"batch from --data lm.data:{name}: {b} × {SEQ} int64, {b} × {SEQ} int64, fed "
                "as model(batch[0]); batch[1] as the target") in res["reason"].replace("\n", " ")
        got[name] = facts["peak_bytes"]
    assert got["large"] > got["small"] * 2   # the activations and logits grow with B
    # the factory's own batch of 8 sequences (no --data): the same step, less the labels
    proc, res, facts = run(repo, env={"BATCH": "8"})
    assert facts["batch"]["source"] == "the model factory lm.model:build"
    assert facts["batch"]["tensors"] == [{"name": "", "shape": [8, SEQ], "dtype": "int64"}]
    assert got["large"] == facts["peak_bytes"] + 8 * SEQ * 8
    assert not (repo / "lm" / "data.py.worker").exists()   # no worker was started


MLP = '''import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def build():
    return nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))


def loader(batch_size):
    return DataLoader(TensorDataset(torch.zeros(256, 1024)), batch_size=batch_size,
                      collate_fn=lambda rows: torch.stack([r[0] for r in rows]))


def small():
    return loader(16)


def large():
    return loader(64)
'''


def test_input_shape_option_wins_over_data_and_data_wins_over_smoke_input_shape(tmp_path):
    """The check's own input_shape is an explicit "estimate at this shape": it wins. The
    loader's batch wins over smoke.input_shape (the DDP smoke's stand-in). A float
    (B, 1024) loader batch and input_shape [B, 1024] give the same peak."""
    repo = copy("pass_batch_fits_h100", tmp_path)
    (repo / "lm" / "mlp.py").write_text(MLP)
    small = run(repo, "--model", "lm.mlp:build", "--data", "lm.mlp:small")[2]
    assert small["batch_size"] == 16 and small["batch"]["source"] == "--data lm.mlp:small"
    (repo / "doctor.yaml").write_text(f"options: {{{ID}: {{input_shape: [16, 1024]}}}}\n")
    proc, res, shaped = run(repo, "--model", "lm.mlp:build", "--data", "lm.mlp:large")
    assert shaped["batch"]["source"] == f"options.{ID}.input_shape"
    assert shaped["batch_size"] == 16 and shaped["peak_bytes"] == small["peak_bytes"]
    (repo / "doctor.yaml").write_text("smoke: {input_shape: [64, 1024]}\n")
    proc, res, data = run(repo, "--model", "lm.mlp:build", "--data", "lm.mlp:small")
    assert data["batch"]["source"] == "--data lm.mlp:small"
    assert data["batch_size"] == 16 and data["peak_bytes"] == small["peak_bytes"]


def test_image_loader_batch_too_big_for_h100_and_no_worker_starts(tmp_path):
    """smoke.data returns a dataset and the job's DataLoader kwargs (8 workers, prefetch,
    persistent): the estimate reads 1024 images and labels in its own process, and the
    model factory alone would have said "fits" on a guessed input."""
    repo = copy("fail_loader_batch_too_big", tmp_path)
    marker = tmp_path / "worker-started"
    proc, res, facts = run(repo, env={"WORKER_MARKER": str(marker)})
    assert proc.returncode == 1 and res["severity"] == "error", proc.stdout + proc.stderr
    (f,) = res["findings"]
    assert f["location"] == {"path": "slurm/train.sbatch", "line": 5}
    assert ("batch from smoke.data cnn.data:loader: 1024 × 3 × 224 × 224 float32, 1024 int64, "
            "fed as model(batch[0]); batch[1] as the target") in f["message"]
    assert "a batch of" in f["fix"] and "per rank (now 1024)" in f["fix"]
    assert facts["verdict"] == "does not fit" and facts["batch_size"] == 1024
    assert not marker.exists()


HF = '''import torch
from torch import nn
from torch.utils.data import DataLoader


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.head = nn.Linear(64, 1000)

    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.head(self.emb(input_ids))
        return nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())


class Masked(LM):
    def forward(self, x, mask=None):
        return self.head(self.emb(x))


def hf():
    return LM()


def masked():
    return Masked()


def rows(n):
    return [{"input_ids": torch.zeros(32, dtype=torch.long),
             "attention_mask": torch.ones(32, dtype=torch.long),
             "labels": torch.zeros(32, dtype=torch.long)} for _ in range(n)]


def dicts():
    return DataLoader(rows(8), batch_size=4)


def pairs():
    return DataLoader([(r["input_ids"], r["labels"]) for r in rows(8)], batch_size=4)


def broken():
    raise OSError("no such shard: /scratch/tokens/00000.bin")
'''


@pytest.mark.parametrize("model,data,fed,reason", [
    ("hf", "dicts", "model(**batch)", None),
    ("masked", "pairs", None, "the batch has 2 items and Masked.forward(x, mask=None) takes 1 "
                              "to 2: which items are inputs (and which a mask or the target)"),
    ("hf", "broken", None, "the first batch of the --data DataLoader could not be read "
                           "(OSError: no such shard"),
])
def test_batch_structures(tmp_path, model, data, fed, reason):
    """A dict batch goes in by name when forward takes its keys; a structure the forward's
    signature leaves open, or a loader that fails, is "cannot estimate", never "fits"."""
    repo = copy("pass_batch_fits_h100", tmp_path)
    (repo / "lm" / "hf.py").write_text(HF)
    proc, res, facts = run(repo, "--model", f"lm.hf:{model}", "--data", f"lm.hf:{data}",
                           "--gpu-memory", "1TB")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if fed:
        assert res["status"] == "pass" and facts["batch"]["fed"] == fed
        assert [t["name"] for t in facts["batch"]["tensors"]] == [
            "input_ids", "attention_mask", "labels"]
        return
    (f,) = res["findings"]
    assert f["severity"] == "warning" and facts["verdict"] == "cannot estimate"
    assert reason in f["message"], f["message"]
    assert ("the data-smoke check says why" if data == "broken" else
            "let the model's forward take the batch as the DataLoader yields it") in f["fix"]
    if data == "broken":
        assert facts["kind"] == "data"
        line = next(i for i, text in enumerate(HF.splitlines(), 1) if "raise OSError" in text)
        assert f["location"] == {"path": "lm/hf.py", "line": line}


RECORDS = '''
import dataclasses


@dataclasses.dataclass
class Batch:   # PyG's Batch and many trainers' batches are objects, not dicts or tuples
    input_ids: torch.Tensor


class Records(LM):
    def forward(self, batch):
        return self.head(self.emb(batch.input_ids))


def records():
    return Records()


def objects():
    return DataLoader(rows(8), batch_size=4, collate_fn=lambda items: Batch(
        torch.stack([r["input_ids"] for r in items])))
'''


@pytest.mark.parametrize("parallel", ["ddp", "fsdp"])
def test_a_batch_object_the_doctor_cannot_open_is_never_a_fit(tmp_path, parallel):
    """A dataclass batch's tensors are leaves torch's tree does not open: they reached the
    model as real tensors, uncounted, and FSDP's fake mode took them, so the estimate said
    "fits" without the batch (review). Now "cannot estimate", naming the type."""
    repo = copy("pass_batch_fits_h100", tmp_path)
    (repo / "lm" / "hf.py").write_text(HF + RECORDS)
    option = f"options: {{gpu-memory-estimate: {{parallel: {parallel}}}}}\n"
    (repo / "doctor.yaml").write_text((repo / "doctor.yaml").read_text() + option)
    proc, res, facts = run(repo, "--model", "lm.hf:records", "--data", "lm.hf:objects",
                           "--gpu-memory", "1TB")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (f,) = res["findings"]
    assert f["severity"] == "warning" and facts["verdict"] == "cannot estimate", f
    assert "the batch holds a lm.hf.Batch, whose tensors the doctor cannot count" \
        in f["message"], f["message"]


def test_a_typo_in_data_is_exit_2_when_only_the_estimate_runs(tmp_path):
    repo = copy("pass_batch_fits_h100", tmp_path)
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--only", ID, "--data",
                               "lm.model:loadr"), "--data lm.model:loadr")


def test_feeding_reads_the_forward_signature():
    """The rule, case by case, in this process (no CLI): which batches go in how."""
    from torch import nn

    from doctor.memory.batch import CannotFeed, feeding

    class Two(nn.Module):
        def forward(self, idx, targets=None):
            return idx

    class Star(nn.Module):
        def forward(self, *xs):
            return xs

    class KwOnly(nn.Module):
        def forward(self, x, *, mask):
            return x

    t = torch.zeros(2, 3)
    assert feeding(nn.Linear(3, 3), t)[0] == "model(batch)"
    assert feeding(nn.Linear(3, 3), (t, t))[0] == "model(batch[0]); batch[1] as the target"
    assert feeding(nn.Linear(3, 3), [t, t, t])[0] == "model(batch[0]); batch[1:] as the target"
    assert feeding(Two(), (t, t))[0] == "model(*batch)"   # nanoGPT: forward(idx, targets)
    assert feeding(Star(), (t, t, t))[0] == "model(*batch)"
    assert feeding(nn.Linear(3, 3), {"image": t})[0] == "model(batch)"   # forward(batch)
    for module, batch in ((KwOnly(), (t, t)), (nn.Bilinear(3, 3, 3), t),
                          (nn.Bilinear(3, 3, 3), (t,)), (Two(), {"x": t, "y": t}),
                          (Two(), {"idx": t, "mask": t})):
        with pytest.raises(CannotFeed):
            feeding(module, batch)
