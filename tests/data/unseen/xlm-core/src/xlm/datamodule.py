import os
from copy import deepcopy
from pathlib import Path
from pprint import pformat
from typing import (
    Callable,
    Dict,
    List,
    Literal,
    Protocol,
    Sequence,
    Union,
    TypedDict,
    Mapping,
    Any,
    Optional,
    cast,
)

try:
    from typing import NotRequired
except ImportError:
    from typing_extensions import NotRequired
import shutil
from torchdata.stateful_dataloader import StatefulDataLoader
from torchdata.stateful_dataloader.sampler import (
    RandomSampler,
    StatefulDistributedSampler,
)
from jaxtyping import Integer
from torch import Tensor as TT
from torch.utils.data import DataLoader, IterableDataset, SequentialSampler
from datasets.distributed import split_dataset_by_node


class _CycleDataset(IterableDataset):
    """Fallback PyTorch IterableDataset that cycles an HF IterableDataset forever.

    Used on datasets < 4.0.0 instead of HF's IterableDataset.repeat(None),
    which wraps the underlying iterable in RepeatExamplesIterable with a broken
    shard_data_sources / num_shards protocol when combined with
    split_dataset_by_node. On datasets >= 4.0.0, _make_dataset_infinite uses
    repeat(None) instead. See https://github.com/dhruvdcoder/xlm-core/issues/39

    Unlike HF's RepeatExamplesIterable, state_dict() deliberately returns {}
    (no mid-cycle resume); epoch boundaries are encoded in max_steps instead.
    """

    def __init__(self, ds):
        super().__init__()
        self._ds = ds

    def __iter__(self):
        while True:
            yield from self._ds

    def state_dict(self) -> dict:
        # Intentionally empty: this dataset is infinite and position restoration
        # is unnecessary for a large corpus cycled many times over. Returning {}
        # (not None) satisfies the torchdata Stateful protocol, which causes
        # StatefulDataLoader to skip the naive fast-forward on resume entirely.
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        pass  # resume from beginning of cycle; fine for an infinite dataset


import torch
from transformers import (
    BatchEncoding,
    PreTrainedTokenizer,
    BertTokenizer as _BertTokenizer,
    BertTokenizerFast as _BertTokenizerFast,
    GPT2Tokenizer as _GPT2Tokenizer,
    GPT2TokenizerFast as _GPT2TokenizerFast,
    PreTrainedTokenizerBase,
)
from transformers.models.esm.tokenization_esm import EsmTokenizer as _EsmTokenizer
from lightning.pytorch.strategies import DDPStrategy as LDDPStrategy
from lightning.pytorch.strategies import FSDPStrategy as LFSDPStrategy
from lightning.pytorch.strategies import (
    SingleDeviceStrategy as LSingleDeviceStrategy,
)
from lightning.fabric.strategies import DDPStrategy as FDDPStrategy
from lightning.fabric.strategies import (
    SingleDeviceStrategy as FSingleDeviceStrategy,
)
import lightning as L
from xlm import flags
from xlm.utils.imports import get_function
from xlm.utils.rank_zero import rank_zero_only
from xlm.noise import NoiseSchedule
from xlm.utils.rank_zero import RankedLogger
import datasets
from packaging.version import Version

# RepeatExamplesIterable in datasets < 4.0.0 breaks split_dataset_by_node;
# see https://github.com/dhruvdcoder/xlm-core/issues/39
_DATASETS_SUPPORTS_NATIVE_REPEAT: bool = (
    Version(datasets.__version__) >= Version("4.0.0")
)

from transformers import (
    PreTrainedTokenizer,
    PreTrainedTokenizerBase,
    AddedToken,
    AutoTokenizer,
)

__all__ = [
    # Protocols and types
    "Tokenizer",
    "BaseBatch",
    "DataLoaderKwargs",
    "Collator",
    # Tokenizers
    "BertTokenizer",
    "BertTokenizerFast",
    "BertTokenizerWithCyclicPads",
    "BertTokenizerFastWithCyclicPads",
    "GPT2Tokenizer",
    "GPT2TokenizerFast",
    "GPT2TokenizerWithCyclicPads",
    "GPT2TokenizerFastWithCyclicPads",
    "SAFETokenizer",
    "SimpleSpaceTokenizer",
    "SimpleSpaceTokenizerWithCyclicPads",
    "add_cyclic_pad_tokens",
    "get_cyclic_pad_token_ids",
    # Dataset managers
    "DatasetManager",
    "LocalDatasetManager",
    "EvalDatasetManager",
    "UnconditionalGenerationDatasetManager",
    # Data modules
    "BaseDataModule",
    "TextDataModule",
    # Collator types and implementations
    "BaseCollatorInput",
    "Seq2SeqCollatorInput",
    "InfillingCollatorInput",
    "DefaultCollator",
    "DefaultCollatorWithPadding",
    "DefaultCollatorWithDynamicPadding",
    "pack_sequences",
]

logger = RankedLogger(__name__, rank_zero_only=True)
ranked_logger = RankedLogger(__name__, rank_zero_only=False)


def _make_dataset_infinite(dataset):
    """Wrap a per-rank iterable so training never hits StopIteration.

    Uses HF IterableDataset.repeat(None) on datasets >= 4.0.0; falls back to
    _CycleDataset on older pins. See https://github.com/dhruvdcoder/xlm-core/issues/39
    """
    if _DATASETS_SUPPORTS_NATIVE_REPEAT:
        logger.info(
            "make_infinite: using IterableDataset.repeat(None) "
            f"(datasets {datasets.__version__})"
        )
        return dataset.repeat(None)
    logger.info(
        "make_infinite: using _CycleDataset fallback "
        f"(datasets {datasets.__version__} < 4.0.0)"
    )
    return _CycleDataset(dataset)

safe_imported = False
try:
    import safe
    from safe.tokenizer import SAFETokenizer as _SAFETokenizer

    safe_imported = True
except ImportError:
    safe_imported = False
    _SAFETokenizer = _BertTokenizer


def _ensure_safe_libs_for_datamodule_tokenizer() -> None:
    if not safe_imported:
        raise ImportError(
            "SAFETokenizer requires the optional SAFE molecules stack "
            '(safe-mol, rdkit, datamol). Install with `pip install "xlm-core[safe]"`.'
        )


################################################################################
# region: Types

SingleDeviceStrategy = (LSingleDeviceStrategy, FSingleDeviceStrategy)
DDPStrategy = (LDDPStrategy, FDDPStrategy)
DistributedStrategy = (LDDPStrategy, FDDPStrategy, LFSDPStrategy)


class Tokenizer(Protocol):
    mask_token_id: int
    pad_token_id: int
    cls_token_id: int
    eos_token_id: int
    bos_token_id: int
    mask_token: str
    pad_token: str
    cls_token: str
    eos_token: str
    bos_token: str

    def __call__(
        self,
        text: Union[str, List[str]],
        add_special_tokens: bool = True,
        return_tensors: Optional[str] = None,
    ) -> BatchEncoding: ...

    @property
    def vocab_size(self) -> int: ...

    def __len__(self) -> int: ...

    def decode(
        self,
        token_ids: Union[List[int], Integer[TT, " seq_len"]],
        skip_special_tokens: bool = True,
    ) -> str: ...

    def batch_decode(
        self,
        token_ids: Union[List[List[int]], Integer[TT, " batch seq_len"]],
        skip_special_tokens: bool = True,
    ) -> List[str]: ...

    def convert_tokens_to_ids(
        self, tokens: Union[str, List[str]]
    ) -> Union[int, List[int]]: ...

    def convert_ids_to_tokens(
        self, ids: Union[int, List[int]]
    ) -> Union[str, List[str]]: ...


class BaseBatch(TypedDict):
    """Dict with the keys that are present in input batches for all models.

    Attributes:
        input_ids (Integer[TT, " batch seq_len"]): The input ids to the model.
        attention_mask (Integer[TT, " batch seq_len"]): 1 for tokens that are not padding.
        token_type_ids (Integer[TT, " batch seq_len"]): Can depend on the model type.
            For ILM  : 0 for CLS, 1 for BOS and prefix, 2 for other tokens.
    """

    input_ids: Integer[TT, " batch seq_len"]
    attention_mask: Integer[TT, " batch seq_len"]
    token_type_ids: Integer[
        TT, " batch seq_len"
    ]  # CLS=0, BOS+REST>=1, prefix=1, non_prefix=2
    # CLEANUP: There is no use for token_type_ids for ARLM and MLM. Instead we should only have constraint tensor.


class DataLoaderKwargs(TypedDict):
    batch_size: int
    num_workers: int
    shuffle: bool
    pin_memory: bool


class TrainTestSplitConfig(TypedDict):
    size: float
    seed: int
    split: Literal["train", "test"]


class Collator(Protocol):
    tokenizer: Tokenizer
    block_size: int
    noise_schedule: NoiseSchedule

    def __call__(
        self,
        batch: List[Mapping[str, Any]],
    ) -> Mapping[str, Any]: ...


# endregion: Types
################################################################################


################################################################################
# region: Tokenizers


class TokenizerMixin:
    """
    1. Adds a `full_vocab_size` property.
    2. provides a `post_creation` method that should be called after creating the tokenizer.
      to ensure all the special tokens are present.
    """

    @property
    def full_vocab_size(self) -> int:
        return self.__len__()

    def post_creation(self):
        """Check the presence of the special tokens and update the post processor."""
        for special_token in [
            "eos_token",
            "bos_token",
            "cls_token",
            "pad_token",
            "mask_token",
            "sep_token",
            "unk_token",
        ]:
            if (token := getattr(self, special_token)) is None:
                raise ValueError(f"{special_token} is not set")


def load_auto_tokenizer(
    pretrained_model_name_or_path: str, special_tokens: dict = None
):
    """Load a Hugging Face ``AutoTokenizer`` for Hydra/config-driven setups.
    Args:
      pretrained_model_name_or_path: Model id or path passed to ``AutoTokenizer.from_pretrained``.
      special_tokens: Optional mapping from **token attribute names** (e.g. ``"mask_token"``) to
          **literal token strings** (e.g. ``"<|mask|>"``). Values are registered as additional
          special tokens, and ``{key}_id`` is set on the tokenizer for each key.
    """
    tokenizer = AutoTokenizer.from_pretrained(
        pretrained_model_name_or_path, trust_remote_code=True
    )
    if special_tokens is not None:
        reserved: dict = {}
        additional: list = []
        for token_name, token in special_tokens.items():
            if token_name == "pad_token":
                reserved["pad_token"] = token
            else:
                additional.append(token)
        if additional:
            tokenizer.add_special_tokens(
                {"additional_special_tokens": additional}
            )
        if reserved:
            tokenizer.add_special_tokens(reserved)
        for token_name, token in special_tokens.items():
            setattr(tokenizer, token_name, token)
            setattr(
                tokenizer,
                f"{token_name}_id",
                tokenizer.convert_tokens_to_ids(token),
            )
    tokenizer.full_vocab_size = tokenizer.__len__()
    return tokenizer


class BertTokenizer(TokenizerMixin, _BertTokenizer):  # type: ignore
    def __init__(self, *args, **kwargs):  # type: ignore
        super().__init__(*args, **kwargs)  # type: ignore
        self.add_special_tokens(
            {"cls_token": "[CLS]", "bos_token": "[BOS]", "eos_token": "[EOS]"}
        )

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        tokenizer = super().from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        tokenizer.post_creation()
        return tokenizer


class BertTokenizerFast(TokenizerMixin, _BertTokenizerFast):  # type: ignore
    def __init__(self, *args, **kwargs):  # type: ignore
        super().__init__(*args, **kwargs)  # type: ignore
        self.add_special_tokens(
            {"cls_token": "[CLS]", "bos_token": "[BOS]", "eos_token": "[EOS]"}
        )

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        tokenizer = super().from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        tokenizer.post_creation()
        return tokenizer


class GPT2Tokenizer(TokenizerMixin, _GPT2Tokenizer):  # type: ignore
    def __init__(self, *args, **kwargs):  # type: ignore
        super().__init__(*args, **kwargs)  # type: ignore
        self.add_special_tokens(
            {
                "cls_token": "<|cls|>",
                "bos_token": "<|bos|>",
                "pad_token": "<|pad|>",
                "unk_token": "<|unk|>",
                "mask_token": "<|mask|>",
                "sep_token": "<|sep|>",
                "eos_token": "<|endoftext|>",  # original
            }
        )

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        tokenizer = super().from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        tokenizer.post_creation()
        return tokenizer


class GPT2TokenizerFast(TokenizerMixin, _GPT2TokenizerFast):  # type: ignore
    def __init__(self, *args, **kwargs):  # type: ignore
        super().__init__(*args, **kwargs)  # type: ignore
        self.add_special_tokens(
            {
                "cls_token": "<|cls|>",
                "bos_token": "<|bos|>",
                "pad_token": "<|pad|>",
                "unk_token": "<|unk|>",
                "mask_token": "<|mask|>",
                "sep_token": "<|sep|>",
                "eos_token": "<|endoftext|>",  # original
            }
        )

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        tokenizer = super().from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        tokenizer.post_creation()
        return tokenizer


class EsmTokenizer(TokenizerMixin, _EsmTokenizer):  # type: ignore[misc]
    """ESM amino-acid tokenizer with XLM-required special tokens.

    Hugging Face :class:`~transformers.EsmTokenizer` omits ``bos_token`` and
    ``sep_token``; :meth:`TokenizerMixin.post_creation` requires them, so we
    alias ``bos`` to ``cls`` and ``sep`` to ``eos`` after loading.
    """

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        tokenizer = super().from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        if tokenizer.bos_token is None:
            tokenizer.bos_token = tokenizer.cls_token
            tokenizer.bos_token_id = tokenizer.cls_token_id
        if tokenizer.sep_token is None:
            tokenizer.sep_token = tokenizer.eos_token
            tokenizer.sep_token_id = tokenizer.eos_token_id
        tokenizer.post_creation()
        return tokenizer


def add_cyclic_pad_tokens(
    tokenizer: PreTrainedTokenizerBase,
    n: int,
    token_template: Optional[str] = None,
) -> None:
    """
    Add n cyclic pad tokens and set pad_i_token, pad_i_token_id for i in range(n).
    Modifies tokenizer in-place.

    Args:
        tokenizer: The tokenizer to modify (BertTokenizer, GPT2Tokenizer, etc.).
        n: Number of cyclic pad tokens.
        token_template: Format string for token names. If None, infers from pad_token:
            GPT2-style (pad_token like "<|pad|>"): "<|pad_{}|>"
            Bert-style (pad_token like "[PAD]"): "[PAD_{}]"
    """
    if token_template is None:
        pad = getattr(tokenizer, "pad_token", None) or ""
        if "<|" in str(pad):
            token_template = "<|pad_{}|>"
        else:
            token_template = "[PAD_{}]"
    new_tokens = [token_template.format(i) for i in range(n)]
    tokenizer.add_tokens(new_tokens, special_tokens=True)
    for i in range(n):
        token_str = token_template.format(i)
        setattr(tokenizer, f"pad_{i}_token", token_str)
        setattr(
            tokenizer,
            f"pad_{i}_token_id",
            tokenizer.convert_tokens_to_ids(token_str),
        )


def get_cyclic_pad_token_ids(tokenizer: Any, n: int) -> List[int]:
    """
    Return [pad_0_token_id, ..., pad_{n-1}_token_id].
    Raises AttributeError if any pad_i_token_id is missing.
    """
    return [getattr(tokenizer, f"pad_{i}_token_id") for i in range(n)]


class GPT2TokenizerWithCyclicPads(GPT2Tokenizer):
    """GPT2Tokenizer with cyclic pad tokens (pad_0..pad_{n-1})."""

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        num_cyclic_pad_tokens = kwargs.pop("num_cyclic_pad_tokens")
        tokenizer = super(GPT2Tokenizer, cls).from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        add_cyclic_pad_tokens(tokenizer, num_cyclic_pad_tokens)
        tokenizer.post_creation()
        return tokenizer


class GPT2TokenizerFastWithCyclicPads(GPT2TokenizerFast):
    """GPT2TokenizerFast with cyclic pad tokens (pad_0..pad_{n-1})."""

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        num_cyclic_pad_tokens = kwargs.pop("num_cyclic_pad_tokens")
        tokenizer = super(GPT2TokenizerFast, cls).from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        add_cyclic_pad_tokens(tokenizer, num_cyclic_pad_tokens)
        tokenizer.post_creation()
        return tokenizer


class BertTokenizerWithCyclicPads(BertTokenizer):
    """BertTokenizer with cyclic pad tokens (pad_0..pad_{n-1})."""

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        num_cyclic_pad_tokens = kwargs.pop("num_cyclic_pad_tokens")
        tokenizer = super(BertTokenizer, cls).from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        add_cyclic_pad_tokens(tokenizer, num_cyclic_pad_tokens)
        tokenizer.post_creation()
        return tokenizer


class BertTokenizerFastWithCyclicPads(BertTokenizerFast):
    """BertTokenizerFast with cyclic pad tokens (pad_0..pad_{n-1})."""

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        num_cyclic_pad_tokens = kwargs.pop("num_cyclic_pad_tokens")
        tokenizer = super(BertTokenizerFast, cls).from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        add_cyclic_pad_tokens(tokenizer, num_cyclic_pad_tokens)
        tokenizer.post_creation()
        return tokenizer


class SAFETokenizer(TokenizerMixin, _SAFETokenizer):
    def __init__(self, *args, **kwargs):
        _ensure_safe_libs_for_datamodule_tokenizer()
        super().__init__(*args, **kwargs)
        _tok = self.get_pretrained()
        _tok.add_tokens(["<", ">"])  # for bracket_safe

    @classmethod
    def from_pretrained(
        cls, pretrained_model_name_or_path: str, *args, **kwargs
    ):
        _ensure_safe_libs_for_datamodule_tokenizer()
        tokenizer = super().from_pretrained(
            pretrained_model_name_or_path, *args, **kwargs
        )
        tokenizer.mask_token = tokenizer.tokenizer.mask_token
        tokenizer.pad_token = tokenizer.tokenizer.pad_token
        tokenizer.cls_token = tokenizer.tokenizer.cls_token
        tokenizer.eos_token = tokenizer.tokenizer.eos_token
        tokenizer.bos_token = tokenizer.tokenizer.bos_token
        tokenizer.sep_token = tokenizer.tokenizer.sep_token
        tokenizer.unk_token = tokenizer.tokenizer.unk_token
        tokenizer.post_creation()

        return tokenizer


class SimpleSpaceTokenizer(PreTrainedTokenizer):
    """Splits on spaces"""

    def __init__(self, vocab: Sequence[str], **kwargs):
        """
        Args:
            vocab (Sequence[str]): List of desired tokens. Following are list of all of the special tokens with
                their corresponding ids:
                    "[PAD]": 0,
                    "[UNK]": 1,
                    "[MASK]": 2,
                    "[EOS]": 3,
                    "[BOS]": 4,
                an id (starting at 5) will be assigned to each character.

            model_max_length (int): Model maximum sequence length.
        """
        self.vocab = vocab
        eos_token = AddedToken("[EOS]", lstrip=False, rstrip=False)
        cls_token = AddedToken("[CLS]", lstrip=False, rstrip=False)
        pad_token = AddedToken("[PAD]", lstrip=False, rstrip=False)
        bos_token = AddedToken("[BOS]", lstrip=False, rstrip=False)
        mask_token = AddedToken("[MASK]", lstrip=True, rstrip=False)
        sep_token = AddedToken("[SEP]", lstrip=False, rstrip=False)
        unk_token = AddedToken("[UNK]", lstrip=False, rstrip=False)

        self._vocab_str_to_int = {
            "[PAD]": 0,
            "[CLS]": 1,
            "[MASK]": 2,
            "[EOS]": 3,
            "[BOS]": 4,
            "[SEP]": 5,
            "[UNK]": 6,
            **{ch: i + 7 for i, ch in enumerate(vocab)},
        }
        self._vocab_int_to_str = {
            v: k for k, v in self._vocab_str_to_int.items()
        }

        super().__init__(
            eos_token=eos_token,
            cls_token=cls_token,
            pad_token=pad_token,
            mask_token=mask_token,
            bos_token=bos_token,
            sep_token=sep_token,
            unk_token=unk_token,
            add_prefix_space=False,
            **kwargs,
        )

    @property
    def vocab_size(self) -> int:
        return len(self._vocab_str_to_int)

    @property
    def full_vocab_size(self) -> int:
        return len(self._vocab_str_to_int)

    def tokenize(self, text: str, **kwargs) -> List[str]:
        # suppose text is a like "split1 split2 split3", convert to character if split* not in vocab
        tokens = []
        for token in text.split(" "):
            if not token:  # skip empty tokens
                continue
            if token not in self._vocab_str_to_int:
                raise ValueError(f"Token {token} not in vocab")
            tokens.append(token)
        return tokens

    def _convert_token_to_id(self, token: str) -> int:
        return self._vocab_str_to_int[token]  # let it raise keyerror

    def _convert_id_to_token(self, index: int) -> str:
        return self._vocab_int_to_str[index]

    def _decode(
        self,
        token_ids: Union[int, List[int]],
        skip_special_tokens: bool = False,
        **kwargs,
    ) -> str:
        return " ".join(
            [self._vocab_int_to_str[token_id] for token_id in token_ids]
        )

    def convert_tokens_to_string(self, tokens):
        return " ".join(tokens)

    def get_vocab(self) -> Dict[str, int]:
        return self._vocab_str_to_int

    @classmethod
    def for_numbers(cls, vocab_size: int, **kwargs) -> "SimpleSpaceTokenizer":
        return cls(vocab=list(map(str, range(vocab_size))), **kwargs)

    def save_pretrained(
        self, save_directory: Union[str, os.PathLike], **kwargs
    ):
        raise NotImplementedError

    @classmethod
    def from_pretrained(
        cls, save_directory: Union[str, os.PathLike], **kwargs
    ):
        raise NotImplementedError

    def from_txt(cls, txt_file: Union[str, os.PathLike], **kwargs):
        vocab = []
        with open(txt_file, "r") as f:
            for line in f:
                vocab.append(line.strip())
        return cls(vocab=vocab, **kwargs)


class SimpleSpaceTokenizerWithCyclicPads(SimpleSpaceTokenizer):
    """SimpleSpaceTokenizer with cyclic pad tokens (pad_0..pad_{n-1})."""

    def __init__(
        self,
        vocab: Sequence[str],
        num_cyclic_pad_tokens: int,
        **kwargs,
    ):
        super().__init__(vocab=vocab, **kwargs)
        # Add [PAD_0], [PAD_1], ..., [PAD_{n-1}] at end of vocab
        next_id = len(self._vocab_str_to_int)
        token_template = "[PAD_{}]"
        for i in range(num_cyclic_pad_tokens):
            token_str = token_template.format(i)
            self._vocab_str_to_int[token_str] = next_id
            self._vocab_int_to_str[next_id] = token_str
            setattr(self, f"pad_{i}_token", token_str)
            setattr(self, f"pad_{i}_token_id", next_id)
            next_id += 1

    @classmethod
    def for_numbers(
        cls,
        vocab_size: int,
        num_cyclic_pad_tokens: int,
        **kwargs,
    ) -> "SimpleSpaceTokenizerWithCyclicPads":
        return cls(
            vocab=list(map(str, range(vocab_size))),
            num_cyclic_pad_tokens=num_cyclic_pad_tokens,
            **kwargs,
        )


# endregion: Tokenizers
################################################################################

################################################################################
# region: Preprocess functions


def tokenizing_preprocess_fn(
    example: Dict[str, Any], tokenizer: PreTrainedTokenizerBase
) -> Dict[str, Any]:
    example["token_ids"] = tokenizer.encode(  # type: ignore
        example["text"], add_special_tokens=False
    )
    return example


# endregion: Preprocess functions
################################################################################


################################################################################
# region: Base DataModule


def parse_hf_dataset_full_name(full_name: str) -> tuple[str, Optional[str], str]:
    """Parse a Hugging Face dataset locator from ``full_name``.

    Supported forms:

    - ``repo/dataset/split`` → ``load_dataset(repo/dataset, split=split)``
    - ``repo/dataset/config/split`` →
      ``load_dataset(repo/dataset, config, split=split)`` (e.g. GSM8K ``main``)

    Returns:
        ``(hub_path, config_name, split)`` where ``config_name`` is ``None`` when
        omitted.
    """
    parts = full_name.split("/")
    if len(parts) == 3:
        return "/".join(parts[:2]), None, parts[2]
    if len(parts) == 4:
        return "/".join(parts[:2]), parts[2], parts[3]
    raise ValueError(
        "full_name must be repo/dataset/split or repo/dataset/config/split; "
        f"got {full_name!r} ({len(parts)} path segments)"
    )


class DatasetManager:
    """Manages a single dataset through its lifecycle: download, preprocess, cache, setup, and dataloader creation.

    Used per split (train/val/test/predict) by :class:`TextDataModule`, which orchestrates
    multiple DatasetManager instances.
    """

    def __init__(
        self,
        collator: Collator,
        full_name: str,
        full_name_debug: str,
        dataloader_kwargs: DataLoaderKwargs,
        filter_fn: Optional[Callable[[Any], bool]] = None,
        filter_suffix: Optional[str] = None,
        preprocess_function: Optional[str] = None,
        preprocess_function_kwargs: Optional[Dict[str, Any]] = None,
        preprocess_load_from_cache_file: Optional[bool] = None,
        on_the_fly_filter_fn: Optional[str] = None,
        on_the_fly_processor: Optional[str] = None,
        on_the_fly_processor_kwargs: Optional[Dict[str, Any]] = None,
        on_the_fly_group_processor: Optional[str] = None,
        on_the_fly_load_from_cache_file: Optional[bool] = None,
        on_the_fly_group_processor_kwargs: Optional[Dict[str, Any]] = None,
        on_the_fly_group_processor_remove_columns: Optional[List[str]] = None,
        model_name: Optional[str] = None,
        columns_to_remove: Optional[List[str]] = None,
        columns_to_keep: Optional[List[str]] = None,
        stages: Optional[
            List[Literal["fit", "validate", "test", "predict"]]
        ] = None,
        iterable_dataset_shards: Optional[int] = None,
        shuffle_buffer_size: Optional[int] = None,
        shuffle_seed: Optional[int] = 42,
        split_by_node: bool = True,
        rewrite_manual_cache: bool = False,
        use_manual_cache: bool = True,
        train_test_split: Optional[TrainTestSplitConfig] = None,
        make_infinite: bool = False,
    ):
        """Initialize the dataset manager.

        Args:
            collator: Collates examples into batches; model-specific.
            full_name: Hugging Face locator: ``repo/ds_name/split`` or
                ``repo/ds_name/config/split`` (e.g. ``openai/gsm8k/main/test``).
            full_name_debug: Used when DEBUG_OVERFIT is True; typically the train
                split path so val/test managers overfit on train data.
            dataloader_kwargs: batch_size, num_workers, shuffle, pin_memory.
            preprocess_function: Dotted path to preprocessing function (e.g., tokenization).
            preprocess_function_kwargs: Kwargs passed to the preprocess function.
            on_the_fly_processor: Dotted path to per-example processor
                (e.g., ids_to_example_fn). For iterable (streaming) datasets, this is applied to each example on the fly, and before the group processor.
            on_the_fly_processor_kwargs: Kwargs for the on-the-fly processor.
            on_the_fly_group_processor: Dotted path to the group processor function,
                which receives large batches of examples, and applies on-the-fly processors
                that require a big chunk of data, for example, packing sequences without padding.
            on_the_fly_group_processor_kwargs: Kwargs for the group processor.
            on_the_fly_group_processor_remove_columns: Passed to ``dataset.map(...,
                remove_columns=...)`` after the group step. When the processor
                changes the number of examples per batch (e.g. :func:`pack_sequences`),
                input columns such as ``token_ids`` must be dropped or HF merges them
                with outputs and column lengths disagree (``IndexError`` in
                ``_batch_to_examples``). Omit or use ``[]`` for 1:1 batch transforms.
            model_name: Used for model-specific cache subdirectories.
            columns_to_remove: Columns to drop during preprocessing (e.g., ["text"]).
            stages: Lightning stages this manager participates in.
            iterable_dataset_shards: If set, dataset is converted to IterableDataset with this many shards.
            shuffle_buffer_size: Buffer size for dataset.shuffle() (IterableDataset).
            shuffle_seed: Seed for shuffle.
            split_by_node: Whether to split IterableDataset by rank in DDP.
            rewrite_manual_cache: If True, re-download and overwrite cached data.
            use_manual_cache: If True, use manual cache dir created using save_to_disk(), else let HF Datasets do automatic caching.
            train_test_split: If set, split the loaded split into train/test via
                ``Dataset.train_test_split``. Keys: ``size`` (float, passed as
                ``test_size``) and optional ``seed`` (int, default 42). Applied
                when building manual caches. Holdout managers (``split: test``)
                load the train-partition cache at runtime when ``DEBUG_OVERFIT``
                is set (see :meth:`_get_load_cache_dir`).
        """
        self.collator = collator
        self._full_name = full_name
        self._full_name_debug = full_name_debug
        if flags.DEBUG_OVERFIT:
            logger.info(
                f"Using {self._full_name_debug} instead of {full_name} because DEBUG_OVERFIT is set to True"
            )
            self.full_name = self._full_name_debug
        else:
            self.full_name = full_name
        # self.split_to_download = split_to_download
        self.dataloader_kwargs = dataloader_kwargs
        self.filter_fn = filter_fn
        if filter_fn is not None and filter_suffix is None:
            raise ValueError(
                "filter_suffix is required when filter_fn is provided"
            )
        # filter_suffix may be set without filter_fn to disambiguate manual cache
        # paths (e.g. different preprocess_function on the same full_name).
        self.filter_suffix = filter_suffix
        self.preprocess_function = preprocess_function
        self.preprocess_function_kwargs = preprocess_function_kwargs or {}
        self.preprocess_load_from_cache_file = preprocess_load_from_cache_file
        self.on_the_fly_filter_fn = on_the_fly_filter_fn
        self.on_the_fly_processor = on_the_fly_processor
        self.on_the_fly_processor_kwargs = on_the_fly_processor_kwargs or {}
        self.on_the_fly_group_processor = on_the_fly_group_processor
        self.on_the_fly_group_processor_kwargs = (
            on_the_fly_group_processor_kwargs or {}
        )
        self.on_the_fly_load_from_cache_file = on_the_fly_load_from_cache_file
        self.on_the_fly_group_processor_remove_columns = (
            on_the_fly_group_processor_remove_columns
        )
        if self.on_the_fly_group_processor is not None:
            if iterable_dataset_shards is None:
                raise ValueError(
                    "on_the_fly_group_processor requires iterable_dataset_shards to be set "
                    "(the group processor changes the number of examples, which only works with IterableDataset)"
                )
            if self.on_the_fly_processor is not None:
                raise ValueError(
                    "on_the_fly_processor and on_the_fly_group_processor cannot both be set; "
                    "the group processor subsumes per-example processing"
                )
        self.model_name = model_name
        self.columns_to_remove = columns_to_remove
        self.columns_to_keep = columns_to_keep
        self.stages = stages if stages is not None else ["fit", "validate"]
        self.iterable_dataset_shards = iterable_dataset_shards
        self.shuffle_buffer_size = shuffle_buffer_size
        self.shuffle_seed = shuffle_seed
        self.split_by_node = split_by_node
        self.dataset = None  # set in setup()
        self.is_iterable_dataset = iterable_dataset_shards is not None
        self.rewrite_manual_cache = rewrite_manual_cache
        self.use_manual_cache = use_manual_cache
        self.train_test_split = train_test_split
        self.make_infinite = False
        if make_infinite:
            if not self.is_iterable_dataset:
                raise ValueError(
                    "make_infinite is only supported for IterableDataset"
                )
            self.make_infinite = True

    def __repr__(self) -> str:
        return f"DatasetManager(full_name={self.full_name})"

    ##################################################
    # region: Properties

    @property
    def _split_to_download(self) -> str:
        return parse_hf_dataset_full_name(self.full_name)[2]

    @property
    def name(self) -> str:
        return parse_hf_dataset_full_name(self.full_name)[0]

    # endregion: Properties
    ##################################################

    ##################################################
    # region: Private methods

    def _download(self, num_proc: Optional[int] = None) -> datasets.Dataset:
        hub_path, config_name, split = parse_hf_dataset_full_name(self.full_name)
        if hub_path[0] == "/":
            hub_path = hub_path[1:]
        logger.info(f"Downloading {self.full_name}")
        split_to_download = split if not self.train_test_split else "train"
        load_kwargs: Dict[str, Any] = {
            "split": split_to_download,
            "num_proc": num_proc,
            "token": os.environ.get("HF_HUB_KEY"),
        }
        if config_name is None:
            ds = datasets.load_dataset(hub_path, **load_kwargs)
        else:
            ds = datasets.load_dataset(hub_path, config_name, **load_kwargs)
        if self.train_test_split is not None:
            ds = ds.train_test_split(
                test_size=self.train_test_split["size"],
                seed=self.train_test_split["seed"],
            )
            try:
                ds = ds[self.train_test_split["split"]]
            except KeyError:
                raise ValueError(
                    f"Invalid split to use: {self.train_test_split['split']}"
                )

        return ds

    def _preprocess(
        self,
        ds: datasets.Dataset,
        tokenizer: Tokenizer,
        num_proc: Optional[int] = None,
    ) -> datasets.Dataset:
        if self.filter_fn is not None:
            filter_fn: Callable = get_function(self.filter_fn)
            ds = ds.filter(filter_fn)
        if self.preprocess_function is not None:
            preprocess_fn: Callable[..., Any] = get_function(
                self.preprocess_function
            )
            fn_kwargs = {
                "tokenizer": tokenizer,
                **self.preprocess_function_kwargs,
            }
            columns_to_remove = []
            if self.columns_to_keep:
                columns_to_remove = [
                    col
                    for col in ds.column_names
                    if col not in self.columns_to_keep
                ]
            if self.columns_to_remove:
                columns_to_remove.extend(self.columns_to_remove)
            # HF datasets rejects num_proc=0; None means single-process map. Dump
            # runs set num_dataset_workers=0 for RAM; that must not propagate as 0 here.
            map_num_proc = num_proc if num_proc is not None and num_proc > 0 else None
            ds = ds.map(
                preprocess_fn,
                batched=False,
                num_proc=map_num_proc,
                fn_kwargs=fn_kwargs,
                remove_columns=columns_to_remove,
                load_from_cache_file=self.preprocess_load_from_cache_file,
            )
        return ds

    def _get_cache_dir(self, manual_cache_dir: str) -> Path:
        if self.filter_suffix is None:
            return Path(manual_cache_dir) / self.full_name
        else:
            hub_path, config_name, split = parse_hf_dataset_full_name(
                self.full_name
            )
            repo, ds_name = hub_path.split("/", 1)
            config_part = f"_{config_name}" if config_name else ""
            full_name_with_filter = (
                f"{repo}/{ds_name}{config_part}_{self.filter_suffix}/{split}"
            )
            return Path(manual_cache_dir) / full_name_with_filter

    def _get_load_cache_dir(self, manual_cache_dir: str) -> Path:
        """Manual cache path used when loading data in :meth:`setup`.

        When ``DEBUG_OVERFIT`` is set, holdout managers (``train_test_split`` with
        ``split: test``) read the train-partition cache (no ``filter_suffix``),
        mirroring ``full_name_debug`` for datasets without ``train_test_split``.
        Cache creation via :meth:`prepare_data` always uses :meth:`_get_cache_dir`.
        """
        if (
            flags.DEBUG_OVERFIT
            and self.train_test_split is not None
            and self.train_test_split["split"] == "test"
        ):
            return Path(manual_cache_dir) / self.full_name
        return self._get_cache_dir(manual_cache_dir)

    def _clean_manual_cache(self, manual_cache_dir: str) -> None:
        cache_dir = self._get_cache_dir(manual_cache_dir)
        logger.info(
            f"Cleaning manual cache for {self.full_name} at {cache_dir}"
        )
        # Fallback to pathlib if fsspec fails
        shutil.rmtree(cache_dir, ignore_errors=True)

    def _manually_cache(
        self, ds: datasets.Dataset, manual_cache_dir: str
    ) -> None:
        cache_dir = self._get_cache_dir(manual_cache_dir)
        logger.info(f"Caching {self.full_name} to {cache_dir}")
        ds.save_to_disk(cache_dir, num_shards=self.iterable_dataset_shards)

    def _load_from_cache(self, manual_cache_dir: str) -> datasets.Dataset:
        cache_dir = self._get_load_cache_dir(manual_cache_dir)
        write_dir = self._get_cache_dir(manual_cache_dir)
        if cache_dir != write_dir:
            logger.info(
                f"DEBUG_OVERFIT: loading holdout manager from train-partition "
                f"manual cache at {cache_dir} (write path remains {write_dir})"
            )
        return datasets.load_from_disk(cache_dir)

    def _check_cache(self, manual_cache_dir: str) -> bool:
        cache_dir = self._get_cache_dir(manual_cache_dir)
        return cache_dir.exists()

    def _apply_on_the_fly_processors(
        self, dataset: datasets.Dataset, tokenizer: Tokenizer
    ):
        if self.on_the_fly_filter_fn is not None:
            filter_fn: Callable = get_function(self.on_the_fly_filter_fn)
            dataset = dataset.filter(filter_fn)
        if self.on_the_fly_processor is not None:
            processor: Callable = get_function(self.on_the_fly_processor)
            kwargs = {
                "tokenizer": tokenizer,
                **self.on_the_fly_processor_kwargs,
            }
            map_kwargs = (
                {}
                if self.is_iterable_dataset
                else dict(
                    load_from_cache_file=self.on_the_fly_load_from_cache_file
                )
            )
            dataset = dataset.map(
                processor,
                batched=False,
                fn_kwargs=kwargs,
                **map_kwargs,
            )
            return dataset
        return dataset

    def _apply_on_the_fly_group_processors(
        self,
        dataset: datasets.Dataset,
        tokenizer: Tokenizer,
        block_size: int,
    ):
        if self.on_the_fly_group_processor is not None:
            group_processor: Callable = get_function(
                self.on_the_fly_group_processor
            )
            # HF map merges input columns with the function output; if the processor
            # changes batch size, remove_columns must drop inputs (see docstring).
            map_kwargs: Dict[str, Any] = {
                "batched": True,
                "fn_kwargs": {
                    "tokenizer": tokenizer,
                    "block_size": block_size,
                    **self.on_the_fly_group_processor_kwargs,
                },
            }
            if self.on_the_fly_group_processor_remove_columns is not None:
                map_kwargs["remove_columns"] = (
                    self.on_the_fly_group_processor_remove_columns
                )
            dataset = dataset.map(group_processor, **map_kwargs)
            return dataset
        return dataset

    # endregion: Private methods
    ##################################################

    ##################################################
    # region: Public methods

    def set_epoch(self, epoch: int) -> None:
        """Set epoch for IterableDataset shuffle buffer reproducibility.

        For IterableDataset, calls dataset.set_epoch(epoch). For map-style datasets
        with DistributedSampler, set_epoch must be called on the sampler separately.

        Args:
            epoch: Current training epoch.

        Warning:
          Note for future extensions. For map-style datasets with DistributedSampler, set_epoch must be called on the sampler separately.
        """
        if hasattr(self.dataset, "set_epoch") and not flags.DEBUG_OVERFIT:
            self.dataset.set_epoch(epoch)  # type: ignore

    def prepare_data(
        self,
        manual_cache_dir: str,
        tokenizer: Tokenizer,
        num_proc: Optional[int] = None,
        load: bool = False,
    ) -> Optional[datasets.Dataset]:
        """Download, preprocess, and cache the dataset.

        If use_manual_cache: checks cache first; downloads and caches (using save_to_disk()) if missing. Note this different from HF datasets' automatic caching.
        If rewrite_manual_cache: re-downloads and overwrites cache.
        Called before setup() by TextDataModule.prepare_data().


        Args:
            manual_cache_dir: Base directory for manual cache.
            tokenizer: Tokenizer for preprocessing.
            num_proc: Number of processes for parallel map operations.
            load: If True and cache exists, load and return the dataset; else return None.

        Returns:
            The dataset if load=True and cache was found/created; None otherwise.

        Note:
            This method is only called on rank 0 and therefore does not set an state on the instance. setup() is called on all ranks.
        """
        if self.use_manual_cache:
            if not self._check_cache(manual_cache_dir):
                logger.info(
                    f"No manual cache for {self.full_name} found at {manual_cache_dir}"
                )
                ds = self._download(num_proc=num_proc)
                ds = self._preprocess(ds, tokenizer, num_proc=num_proc)
                self._manually_cache(ds, manual_cache_dir)
            elif self.rewrite_manual_cache:
                logger.info(
                    f"Rewriting manual cache for {self.full_name} at {manual_cache_dir}"
                )
                ds = self._download(num_proc=num_proc)
                logger.info(
                    f"Cleaned {ds.cleanup_cache_files()} automatic cached files"
                )
                self._clean_manual_cache(manual_cache_dir)
                ds = self._preprocess(ds, tokenizer, num_proc=num_proc)
                self._manually_cache(ds, manual_cache_dir)
            else:
                logger.info(
                    f"Found manual cache for {self.full_name} at {self._get_cache_dir(manual_cache_dir)}"
                )
                if load:
                    ds = self._load_from_cache(manual_cache_dir)
                else:
                    ds = None
        else:
            logger.info(
                f"Downloading {self.full_name} without using manual cache"
            )
            ds = self._download(num_proc=num_proc)
            ds = self._preprocess(ds, tokenizer, num_proc=num_proc)
        return ds

    def setup(
        self,
        stage: Literal["fit", "validate", "test", "predict"],
        manual_cache_dir: str,
        tokenizer: Tokenizer,
        block_size: int,
        is_ddp: bool,
        rank: int,
        world_size: int,
        num_dataset_workers: Optional[int] = None,
    ) -> None:
        """Load dataset (should have already been downloaded and preprocessed by prepare_data()), optionally convert to IterableDataset, apply on-the-fly and group processors, and split by node if DDP.

        calledBy:
            TextDataModule.setup().

        Args:
            stage: Lightning stage (fit, validate, test, predict).
            manual_cache_dir: Base directory for manual cache.
            tokenizer: Tokenizer for processors.
            block_size: Max sequence length for group processors.
            is_ddp: Whether distributed training is used.
            rank: Global rank of this process.
            world_size: Total number of processes.
            num_dataset_workers: Number of workers for prepare_data if cache not used.
        """
        if stage in self.stages and self.dataset is None:
            if self.use_manual_cache:
                dataset = self._load_from_cache(manual_cache_dir)
            else:
                dataset = self.prepare_data(
                    manual_cache_dir,
                    tokenizer,
                    num_proc=num_dataset_workers,
                    load=True,
                )
            if self.is_iterable_dataset:
                dataset = dataset.to_iterable_dataset(
                    num_shards=self.iterable_dataset_shards
                )
            if (
                self.shuffle_buffer_size is not None
                and not flags.DEBUG_OVERFIT
            ):
                dataset = dataset.shuffle(
                    buffer_size=self.shuffle_buffer_size,
                    seed=self.shuffle_seed,
                )

            dataset = self._apply_on_the_fly_processors(dataset, tokenizer)
            dataset = self._apply_on_the_fly_group_processors(
                dataset,
                tokenizer,
                block_size=block_size,
            )
            self.dataset = dataset
            if (
                is_ddp
                and world_size > 1
                and self.split_by_node
                and self.is_iterable_dataset
            ):
                logger.info(
                    f"Splitting dataset {self.full_name} by node for {world_size=}"
                )
                self.dataset = split_dataset_by_node(
                    self.dataset, rank=rank, world_size=world_size
                )
                if self.make_infinite:
                    self.dataset = _make_dataset_infinite(self.dataset)

    def get_dataloader(
        self,
        type: Literal["train", "val", "test", "predict"],
        is_ddp: bool,
        rank: int,
        world_size: int,
    ) -> Union[DataLoader, StatefulDataLoader]:
        """Return a DataLoader or StatefulDataLoader for the given split.

        Chooses loader and sampler based on: DDP vs single-GPU, IterableDataset vs map-style.
        Train: StatefulDataLoader with appropriate sampler. Val/test/predict: standard DataLoader.

        Args:
            type: Dataloader type (train, val, test, predict).
            is_ddp: Whether distributed training is used.
            rank: Global rank of this process.
            world_size: Total number of processes.

        Returns:
            Configured DataLoader or StatefulDataLoader.
        """
        if (
            type == "train"
            and is_ddp
            and world_size > 1
            and self.is_iterable_dataset
        ):  # case 1
            DL = StatefulDataLoader
            logger.info(
                f"Using StatefulDataLoader for {type} of {self.full_name} dataloader"
            )
            sampler = None
            # remove shuffle from dataloader kwargs if provided
            if "shuffle" in self.dataloader_kwargs:
                logger.warning(
                    f"Shuffle is set to True for {self.full_name} {type} dataloader for DDP with IterableDataset. This will be ignored as shuffling is handled by the dataset in this case."
                )
                self.dataloader_kwargs.pop("shuffle")
            # Checks:
            num_workers = self.dataloader_kwargs.get("num_workers", 1)
            assert (
                self.iterable_dataset_shards is not None
            ), "iterable_dataset_shards must be set"
            num_shards_per_worker = self.iterable_dataset_shards / (
                world_size * num_workers
            )
            per_worker_batch_size = self.dataloader_kwargs.get("batch_size", 1)
            if num_shards_per_worker > per_worker_batch_size:
                #raise ValueError(
                logger.warning(
                    f"{num_shards_per_worker=} > {per_worker_batch_size=}. This may cause the training to hang even with drop_last=True. "
                    "Either increase the num_workers or world_size to bring down the num_shards_per_worker or reduce the num_shards or increase the batch_size."
                )
        elif (
            type == "train"
            and is_ddp
            and world_size > 1
            and not self.is_iterable_dataset
        ):  # case 2
            # We setup the generator here because we want its seed to be
            # be dependent on the global seed. Letting the sampler create
            # its own generator will use a hardcoded seed of 0 as of today (https://github.com/pytorch/data/issues/1440)
            # while issue 1440 was resolved for RandomSampler, I believe it still exists for StatefulDistributedSampler.
            # Therefore, we continue to send our own seed.
            DL = StatefulDataLoader
            logger.info(
                f"Using StatefulDataLoader for {type} of {self.full_name} dataloader"
            )
            seed = int(torch.empty((), dtype=torch.int64).random_().item())
            sampler = StatefulDistributedSampler(
                self.dataset,
                seed=seed,
                shuffle=True if not flags.DEBUG_OVERFIT else False,
                # num_replicas=world_size, # Let it retrieve these values from the distributed context
                # rank=rank,
            )
        elif (
            type == "train" and not is_ddp and not self.is_iterable_dataset
        ):  # case 3
            DL = StatefulDataLoader
            sampler = (
                RandomSampler(self.dataset)
                if not flags.DEBUG_OVERFIT
                else SequentialSampler(self.dataset)
            )
        elif (
            type == "train" and not is_ddp and self.is_iterable_dataset
        ):  # case 4
            DL = StatefulDataLoader
            sampler = None
        elif type in ["val", "test", "predict"]:
            sampler = None
            DL = DataLoader
            if self.dataloader_kwargs.get("shuffle", False):
                logger.warning(
                    f"Shuffle is set to True for {type} dataloader. This will be ignored as {type} dataloaders are not shuffled."
                )
            self.dataloader_kwargs["shuffle"] = False
        else:
            raise ValueError(f"Invalid dataloader type: {type}")

        dataloader = DL(
            self.dataset,
            collate_fn=self.collator,
            sampler=sampler,
            **self.dataloader_kwargs,
        )
        return dataloader

    # endregion: Public methods
    ##################################################


class LocalDatasetManager(DatasetManager):
    def __init__(
        self,
        *args,
        ds_type: Optional[str] = None,
        load_kwargs: Optional[Dict[str, Any]] = None,
        **kwargs,
    ):
        if ds_type is None:
            raise ValueError("ds_type is required")
        super().__init__(*args, **kwargs)
        self.load_kwargs = load_kwargs or {}
        self.ds_type = ds_type

    def _download(self, num_proc: Optional[int] = None) -> datasets.Dataset:
        if self.ds_type == "csv":
            # If data_files is specified in load_kwargs, use it; otherwise construct from path
            load_kwargs_copy = self.load_kwargs.copy()
            if "data_files" in load_kwargs_copy:
                data_files = load_kwargs_copy.pop("data_files")
                ds = datasets.load_dataset(
                    "csv",
                    data_files=data_files,
                    **load_kwargs_copy,
                    num_proc=num_proc,
                )["train"]
            else:
                file_name = f"{self._split_to_download}.csv"
                _path = Path(self.full_name).parent
                data_files = str(_path / file_name)
                ds = datasets.load_dataset(
                    "csv",
                    data_files=data_files,
                    **self.load_kwargs,
                    num_proc=num_proc,
                )["train"]
            return ds
        else:
            raise ValueError(f"Unsupported dataset type: {self.ds_type}")


class EvalDatasetManager:
    """Minimal map-style dataset manager for eval-only splits.

    Unlike :class:`DatasetManager`, this does not support iterable datasets,
    manual disk caching, on-the-fly processors, or training dataloaders.
    Manual cache is omitted because cache paths do not distinguish tokenizer /
    model; HF ``Dataset.map`` auto-cache is optional via ``load_from_cache_file``
    (hashes ``fn_kwargs`` including the tokenizer).

    Implements the same duck-typed API as :class:`DatasetManager` for
    :class:`TextDataModule`: ``prepare_data``, ``setup``, ``get_dataloader``,
    ``set_epoch``.
    """

    def __init__(
        self,
        collator: Collator,
        full_name: str,
        dataloader_kwargs: DataLoaderKwargs,
        preprocess_function: Optional[str] = None,
        preprocess_function_kwargs: Optional[Dict[str, Any]] = None,
        load_from_cache_file: bool = False,
        filter_fn: Optional[Callable[..., Any]] = None,
        filter_suffix: Optional[str] = None,
        columns_to_remove: Optional[List[str]] = None,
        columns_to_keep: Optional[List[str]] = None,
        stages: Optional[
            List[Literal["fit", "validate", "test", "predict"]]
        ] = None,
    ):
        self.collator = collator
        self.full_name = full_name
        self.dataloader_kwargs = dataloader_kwargs
        self.preprocess_function = preprocess_function
        self.preprocess_function_kwargs = preprocess_function_kwargs or {}
        self.load_from_cache_file = load_from_cache_file
        self.filter_fn = filter_fn
        self.filter_suffix = filter_suffix
        self.columns_to_remove = columns_to_remove
        self.columns_to_keep = columns_to_keep
        self.stages = stages if stages is not None else ["validate", "test"]
        self.dataset: Optional[datasets.Dataset] = None

    def __repr__(self) -> str:
        return f"EvalDatasetManager(full_name={self.full_name})"

    @property
    def _split_to_download(self) -> str:
        return parse_hf_dataset_full_name(self.full_name)[2]

    @property
    def name(self) -> str:
        return parse_hf_dataset_full_name(self.full_name)[0]

    def _download(self, num_proc: Optional[int] = None) -> datasets.Dataset:
        hub_path, config_name, split = parse_hf_dataset_full_name(self.full_name)
        if hub_path[0] == "/":
            hub_path = hub_path[1:]
        logger.info(f"Downloading {self.full_name}")
        load_kwargs: Dict[str, Any] = {
            "split": self._split_to_download,
            "num_proc": num_proc,
            "token": os.environ.get("HF_HUB_KEY"),
        }
        if config_name is None:
            return datasets.load_dataset(hub_path, **load_kwargs)
        return datasets.load_dataset(hub_path, config_name, **load_kwargs)

    def _preprocess(
        self,
        ds: datasets.Dataset,
        tokenizer: Tokenizer,
        num_proc: Optional[int] = None,
    ) -> datasets.Dataset:
        if self.filter_fn is not None:
            resolved_filter: Callable[..., Any] = get_function(
                self.filter_fn  # type: ignore[arg-type]
            )
            ds = ds.filter(resolved_filter)
        if self.preprocess_function is not None:
            preprocess_fn: Callable[..., Any] = get_function(
                self.preprocess_function
            )
            fn_kwargs = {
                "tokenizer": tokenizer,
                **self.preprocess_function_kwargs,
            }
            columns_to_remove: List[str] = []
            if self.columns_to_keep:
                columns_to_remove = [
                    col
                    for col in ds.column_names
                    if col not in self.columns_to_keep
                ]
            if self.columns_to_remove:
                columns_to_remove.extend(self.columns_to_remove)
            ds = ds.map(
                preprocess_fn,
                batched=False,
                num_proc=num_proc,
                fn_kwargs=fn_kwargs,
                remove_columns=columns_to_remove,
                load_from_cache_file=self.load_from_cache_file,
            )
        return ds

    def set_epoch(self, epoch: int) -> None:
        return

    def prepare_data(
        self,
        manual_cache_dir: str,
        tokenizer: Tokenizer,
        num_proc: Optional[int] = None,
        load: bool = False,
    ) -> Optional[datasets.Dataset]:
        del manual_cache_dir, load  # API parity with DatasetManager; unused
        logger.info(
            f"EvalDatasetManager: preparing {self.full_name} (no manual cache)"
        )
        ds = self._download(num_proc=num_proc)
        ds = self._preprocess(ds, tokenizer, num_proc=num_proc)
        return ds

    def setup(
        self,
        stage: Literal["fit", "validate", "test", "predict"],
        manual_cache_dir: str,
        tokenizer: Tokenizer,
        block_size: int,
        is_ddp: bool,
        rank: int,
        world_size: int,
        num_dataset_workers: Optional[int] = None,
    ) -> None:
        del block_size, is_ddp, rank, world_size  # map-style eval; unused
        if stage in self.stages and self.dataset is None:
            ds = self.prepare_data(
                manual_cache_dir,
                tokenizer,
                num_proc=num_dataset_workers,
                load=True,
            )
            self.dataset = ds

    def get_dataloader(
        self,
        type: Literal["train", "val", "test", "predict"],
        is_ddp: bool,
        rank: int,
        world_size: int,
    ) -> Union[DataLoader, StatefulDataLoader]:
        del is_ddp, rank, world_size
        if type == "train":
            raise ValueError(
                "EvalDatasetManager does not support train dataloaders"
            )
        if self.dataset is None:
            raise RuntimeError(
                f"EvalDatasetManager.setup must run before get_dataloader; "
                f"dataset is None for {self.full_name}"
            )
        if self.dataloader_kwargs.get("shuffle", False):
            logger.warning(
                f"Shuffle is set to True for {self.full_name} {type} dataloader. "
                "This will be ignored as eval dataloaders are not shuffled."
            )
        self.dataloader_kwargs["shuffle"] = False
        return DataLoader(
            self.dataset,
            collate_fn=self.collator,
            sampler=None,
            **self.dataloader_kwargs,
        )


class UnconditionalGenerationDatasetManager:
    """
    This is used for unconditional generation, where we don't have any input text.
    """

    def __init__(
        self,
        dataset_constructor_str: str,  # like "xlm.lm.ilm.datamodule_ilm.ILMEmptyDataset"
        collator: Collator,
        num_examples: int,
        dataloader_kwargs: DataLoaderKwargs,
        split_by_node: bool = True,
        dataset_kwargs: Optional[Dict[str, Any]] = None,
    ):
        self.num_examples = num_examples
        self.split_by_node = split_by_node
        self.dataset_constructor: Callable[
            [Tokenizer, int], IterableDataset
        ] = get_function(dataset_constructor_str)
        self.collator = collator
        self.dataloader_kwargs = dataloader_kwargs
        self.dataset_kwargs = dataset_kwargs or {}

    def __repr__(self) -> str:
        return f"ILMUnconditionalGenerationDatasetManager()"

    @property
    def name(self) -> str:
        return "empty"

    def set_epoch(self, epoch: int) -> None:
        return

    def prepare_data(
        self,
        manual_cache_dir: str,
        tokenizer: Tokenizer,
        num_proc: Optional[int] = None,
    ) -> datasets.Dataset:
        return

    def setup(
        self,
        stage: Literal["fit", "validate", "test", "predict"],
        manual_cache_dir: str,
        tokenizer: Tokenizer,
        block_size: int,
        is_ddp: bool,
        rank: int,
        world_size: int,
        num_dataset_workers: Optional[int] = None,
    ) -> None:
        # if is_ddp and world_size > 1 and self.split_by_node:
        #    examples_per_node = self.num_examples // world_size
        # else:
        #    examples_per_node = self.num_examples
        examples_per_node = self.num_examples
        dataset = self.dataset_constructor(
            tokenizer,
            examples_per_node,
            **self.dataset_kwargs,
        )
        self.dataset = dataset

    def get_dataloader(
        self,
        type: Literal["train", "val", "test", "predict"],
        is_ddp: bool,
        rank: int,
        world_size: int,
    ) -> Union[DataLoader, StatefulDataLoader]:
        if type == "train":
            raise ValueError(
                "Train dataloader is not supported for unconditional generation."
            )
        return DataLoader(
            self.dataset, collate_fn=self.collator, **self.dataloader_kwargs
        )


class BaseDataModule(L.LightningDataModule):
    """
    Base class for all datamodules.
    """

    no_trainer_mode: bool = False
    dataloader_names: Dict[
        Literal["train", "val", "test", "predict"], Dict[int, str]
    ]
    dataloader_ids: Dict[
        Literal["train", "val", "test", "predict"], Dict[str, int]
    ]
    tokenizer: Tokenizer
    """The tokenizer.[Required]"""
    global_batch_size: int
    train_dataloader_batch_size: int

    def __init__(self, *args, **kwargs):  # type: ignore
        super().__init__()  # LightningDataModule.__init__() does not take any arguments
        self.prepare_data_per_node = False
        self.no_trainer_mode = False

    def print_batch(
        self,
        batch: BaseBatch,
        split: Literal["train", "val", "test", "predict"],
        dataloader_idx: Optional[int] = None,
    ):
        """Required to print train and validation batches at the beginning of the epoch."""
        raise NotImplementedError("Not implemented")

    def _check_grad_accum(self):
        if self.trainer is None:
            logger.warning("Trainer is not setup. Cannot check grad accum.")
            return
        if self._is_distributed():
            num_nodes = self.trainer.num_nodes
            num_gpus_per_node = self.trainer.num_devices
            accum_steps = self.trainer.accumulate_grad_batches
            logger.info(
                f"global_batch_size: {self.global_batch_size} | num_nodes: {num_nodes} | num_gpus_per_node: {num_gpus_per_node} | accum_steps: {accum_steps}"
            )
            if (
                self.global_batch_size
                % (
                    self.train_dataloader_kwargs["batch_size"]
                    * num_nodes
                    * num_gpus_per_node
                    * accum_steps
                )
                != 0
            ):
                raise ValueError(
                    f"Global batch size ({self.global_batch_size}) is not equal to "
                    f"per_device_batch_size ({self.train_dataloader_kwargs['batch_size']}) * num_nodes ({num_nodes}) * num_gpus_per_node ({num_gpus_per_node}) * accum_steps ({accum_steps})."
                )

    def _is_distributed(self) -> bool:
        if self.trainer is not None:
            strategy = self.trainer.strategy
            if isinstance(strategy, DistributedStrategy):
                return True
            elif isinstance(strategy, SingleDeviceStrategy):
                return False
            else:
                raise ValueError(
                    f"Dataloader does not support {type(strategy)} strategy"
                )
        else:
            logger.warning(
                "Tried to detect distributed strategy before trainer was set."
                " Are you calling `LightningDataModule.*_dataloader()` methods manually?"
                " Make sure you know what you are doing!"
            )
            return False

    @property
    def rank(self) -> int:
        if self.trainer is not None:
            return self.trainer.global_rank
        elif self.no_trainer_mode:
            logger.warning(
                "No trainer mode. Returning rank 0. If using multiple GPUs, this will result in incorrect results."
            )
            return 0
        else:
            raise ValueError("Trainer is not set")

    @property
    def world_size(self) -> int:
        if self.trainer is not None:
            return self.trainer.world_size
        elif self.no_trainer_mode:
            logger.warning(
                "No trainer mode. Returning world size 1. If using multiple GPUs, this will result in incorrect results."
            )
            return 1
        else:
            raise ValueError("Trainer is not set")


class TextDataModule(BaseDataModule):
    def __init__(
        self,
        manual_cache_dir: str,
        tokenizer: Tokenizer,
        # dataset_managers: List[DatasetManager],
        dataset_managers: Dict[
            Literal["train", "val", "test", "predict"],
            Dict[
                str,
                Union[
                    DatasetManager,
                    EvalDatasetManager,
                    UnconditionalGenerationDatasetManager,
                ],
            ],
        ],
        noise_schedule: Optional[NoiseSchedule] = None,
        rewrite_manual_cache: bool = False,
        block_size: int = 128,
        global_batch_size: int = 512,
        verbosity: Literal["warning", "info", "debug"] = "info",
        num_unconditional_samples: Optional[int] = None,
        num_dataset_workers: Optional[int] = None,
        print_batch_fn: Optional[str] = None,
    ):
        super().__init__()
        self.manual_cache_dir = manual_cache_dir
        self.num_dataset_workers = num_dataset_workers
        self.dataset_managers = dataset_managers
        self.noise_schedule = noise_schedule
        self.block_size = block_size
        self.global_batch_size = global_batch_size
        self.num_unconditional_samples = num_unconditional_samples
        self.tokenizer = tokenizer
        self.rewrite_manual_cache = rewrite_manual_cache
        datasets.utils.logging.set_verbosity(
            datasets.utils.logging.log_levels[verbosity]
        )
        # dataloader names
        self.dataloader_names = {
            "train": {},
            "val": {},
            "test": {},
            "predict": {},
        }
        self.dataloader_ids = {
            "train": {},
            "val": {},
            "test": {},
            "predict": {},
        }
        # check the dataloader_ids for each dataset_manager
        for split, ds_managers in self.dataset_managers.items():
            if split not in ["train", "val", "test", "predict"]:
                raise ValueError(f"Invalid split {split} in dataset_managers")
            if split == "train" and len(ds_managers) != 1:
                raise ValueError(f"There should be exactly one train dataset")
            for dataloader_idx, (
                dataloader_name,
                ds_manager,
            ) in enumerate(ds_managers.items()):
                self.dataloader_names[split][dataloader_idx] = dataloader_name
                self.dataloader_ids[split][dataloader_name] = dataloader_idx

        # determine train dataloader kwargs
        for split, ds_managers in self.dataset_managers.items():
            if split == "train":
                for dataloader_name, ds_manager in ds_managers.items():
                    self.train_dataloader_kwargs = ds_manager.dataloader_kwargs
                    self.train_dataloader_batch_size = (
                        ds_manager.dataloader_kwargs["batch_size"]
                    )

        dl_names_str = pformat(self.dataloader_names)
        logger.info(f"Dataloader names:\n{dl_names_str}")
        if print_batch_fn is not None:
            self.print_batch_fn = get_function(print_batch_fn)
        else:
            self.print_batch_fn = print_batch_base

    def print_batch(
        self,
        batch,
        split: Literal["train", "val", "test", "predict"],
        dataloader_idx: Optional[int] = None,
    ):
        dl_name = (
            self.dataloader_names[split][dataloader_idx]
            if dataloader_idx is not None
            else ""
        )
        self.print_batch_fn(batch, split, self.tokenizer, dl_name)

    def prepare_data(self) -> None:
        ds_wrapper: Union[
            DatasetManager,
            EvalDatasetManager,
            UnconditionalGenerationDatasetManager,
        ]
        for split, ds_managers in self.dataset_managers.items():
            for dl_name, ds_wrapper in ds_managers.items():
                ds_wrapper.prepare_data(
                    manual_cache_dir=self.manual_cache_dir,
                    tokenizer=self.tokenizer,
                    num_proc=self.num_dataset_workers,
                )

    def setup(
        self, stage: Literal["fit", "validate", "test", "predict"]
    ) -> None:
        ds_wrapper: Union[
            DatasetManager,
            EvalDatasetManager,
            UnconditionalGenerationDatasetManager,
        ]
        for split, ds_managers in self.dataset_managers.items():
            for dl_name, ds_wrapper in ds_managers.items():
                ds_wrapper.setup(
                    stage,
                    manual_cache_dir=self.manual_cache_dir,
                    tokenizer=self.tokenizer,
                    block_size=self.block_size,
                    is_ddp=self._is_distributed(),
                    rank=self.rank,
                    world_size=self.world_size,
                    num_dataset_workers=self.num_dataset_workers,
                )

    def _get_dataloaders(
        self, split: Literal["train", "val", "test", "predict"]
    ) -> Any:
        dataloaders = []

        for split_, ds_managers in self.dataset_managers.items():
            for dl_name, ds_wrapper in ds_managers.items():
                if split_ == split:
                    dl = ds_wrapper.get_dataloader(
                        split,
                        is_ddp=self._is_distributed(),
                        rank=self.rank,
                        world_size=self.world_size,
                    )
                    dataloaders.append(dl)

        if split == "train" and len(dataloaders) != 1:
            raise ValueError(
                "there should be exactly one train dataset and dataloader"
            )
        return dataloaders if split != "train" else dataloaders[0]

    def train_dataloader(self) -> Any:
        return self._get_dataloaders("train")

    def val_dataloader(self) -> Any:
        return self._get_dataloaders("val")

    def test_dataloader(self) -> Any:
        return self._get_dataloaders("test")

    def predict_dataloader(self) -> Any:
        return self._get_dataloaders("predict")

    def set_epoch(self, epoch: int) -> None:
        ds_wrapper: Union[
            DatasetManager,
            EvalDatasetManager,
            UnconditionalGenerationDatasetManager,
        ]
        for split, ds_managers in self.dataset_managers.items():
            for dl_name, ds_wrapper in ds_managers.items():
                ds_wrapper.set_epoch(epoch)


# endregion: Base DataModule
################################################################################


################################################################################
# region: Processors


def token_ids_to_input_ids(
    example: Dict[Literal["token_ids"], List[int]],
    tokenizer: PreTrainedTokenizerBase,
    block_size: Optional[int] = None,
):
    return {
        "input_ids": example["token_ids"][:block_size],
    }


def token_ids_to_input_ids_and_prompt_ids(
    example: Dict[Literal["token_ids"], List[int]],
    tokenizer: PreTrainedTokenizerBase,
    block_size: Optional[int] = None,
):
    return {
        "input_ids": example["input_token_ids"][:block_size],
        "prompt_ids": example["prompt_token_ids"][:block_size],
    }


def ids_to_example_fn(
    example: Dict[Literal["token_ids"], List[int]],
    tokenizer: PreTrainedTokenizerBase,
    block_size: Optional[int] = None,
) -> Dict[Literal["input_ids", "attention_mask", "token_type_ids"], List[int]]:
    """Convert raw token_ids to input_ids, attention_mask, and token_type_ids.

    Does:
        1. Calls `tokenizer.build_inputs_with_special_tokens` and `tokenizer.create_token_type_ids_from_sequences`
            to produce `input_ids` and `token_type_ids`.
        2. Creates an `attention_mask` of all ones.

    Does not do:
        1. Padding/truncation.

    Args:
        example: A dictionary with a "token_ids" key, and value which is a list of token ids.
        tokenizer: A tokenizer that implements `PretrainedTokenizerBase` interface.
            Specifically, it should have `build_inputs_with_special_tokens` and
            `create_token_type_ids_from_sequences` methods overridden if the default
            implementations are not correct.
        block_size: The block size to pad/truncate the input_ids to.
    Returns:
        A dictionary with "input_ids", "attention_mask", and "token_type_ids" keys.
    """
    input_ids = tokenizer.build_inputs_with_special_tokens(
        example["token_ids"]
    )
    attention_mask = [1] * len(input_ids)
    token_type_ids = tokenizer.create_token_type_ids_from_sequences(
        example["token_ids"]
    )
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
    }


def pack_sequences(
    examples: Dict[str, List[List[int]]],
    tokenizer: PreTrainedTokenizerBase,
    block_size: int,
    drop_last: bool = True,
    use_bos: bool = True,
    **kwargs: Any,
) -> Dict[str, List[List[int]]]:
    """Pack sequences without padding using EOS as separator and optional BOS.

    Concatenates sequences with [BOS] seq [EOS] (or seq [EOS] if use_bos=False),
    then chunks into blocks of exactly block_size. For the last incomplete block:
    drop or pad according to drop_last.

    Args:
        examples: Batched dict with "token_ids" key (list of token id lists).
        tokenizer: Tokenizer for BOS, EOS, PAD ids.
        block_size: Target block length.
        drop_last: If True, drop incomplete last block; else pad with pad_token_id.
        use_bos: If True, prepend BOS before each sequence.
        **kwargs: Absorbed for interface compatibility.

    Returns:
        Dict with "input_ids", "attention_mask", "token_type_ids" (zeros).
    """
    eos = tokenizer.eos_token_id
    bos = tokenizer.bos_token_id if use_bos else None
    if eos is None:
        raise ValueError(
            "Tokenizer must have eos_token_id for sequence packing"
        )
    if use_bos and bos is None:
        bos = eos

    sequences = examples["token_ids"]
    stream = []
    for seq in sequences:
        if use_bos:
            stream.extend([bos] + seq + [eos])
        else:
            stream.extend(seq + [eos])

    input_ids = []
    attention_mask = []
    token_type_ids = []
    pad_id = tokenizer.pad_token_id

    for i in range(0, len(stream), block_size):
        block = stream[i : i + block_size]
        if len(block) < block_size:
            if drop_last:
                break
            n_pad = block_size - len(block)
            block = block + [pad_id] * n_pad
            attn = [1] * (block_size - n_pad) + [0] * n_pad
        else:
            attn = [1] * block_size

        input_ids.append(block)
        attention_mask.append(attn)
        token_type_ids.append([0] * block_size)

    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
    }


class DefaultEmptyDataset(IterableDataset):
    def __init__(
        self,
        tokenizer: Tokenizer,
        num_examples: int,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        empty_text: str = "",
    ):
        """
        Args:
            tokenizer_kwargs: Keyword arguments for the tokenizer.

            empty_text: For MLM, you will want to set the `empty_text` to a sequence of all mask tokens.
        """
        self.tokenizer = tokenizer
        self.num_examples = num_examples
        self.tokenizer_kwargs = tokenizer_kwargs or {}
        self.empty_text = empty_text

    def __iter__(self):
        for _ in range(self.num_examples):
            ex = self.tokenizer(
                self.empty_text,
                add_special_tokens=False,
                **self.tokenizer_kwargs,
            )
            yield ex


def replicate_examples(
    examples: Dict[str, List[List[int]]], tokenizer, num_samples: int, **kwargs
):
    """Repeat each example in the dictionary `num_samples` times such that the repeated examples are contiguous in the list."""
    examples_replicated = {}
    for key in examples:
        replicated: List[List[int]] = []
        for ex in examples[key]:
            for _ in range(num_samples):
                replicated.append(deepcopy(ex))
        examples_replicated[key] = replicated
    return examples_replicated


# endregion: Processors
################################################################################


################################################################################
# region: Collators


class BaseCollatorInput(TypedDict):
    """Dict with values that are lists of raw input_ids of variable length.

    This is the input to the collator for pre-training.

    The elements of the lists can be of different lengths.

    Attributes:
        input_ids (List[int]): The input ids.
    """

    input_ids: List[int]


class Seq2SeqCollatorInput(TypedDict):
    """Input rows for MLM seq2seq collators (see ``mlm.datamodule_mlm``).

    Attributes:
        prompt_ids: Prefix / prompt token ids (collator ``prompt_field``;
            default ``prompt_ids``).
        target_ids: Suffix token ids when using ``target_field`` (default
            ``target_ids``); may be empty or omitted for prompt-only batches.
        input_ids: Legacy suffix field; used if ``target_field`` is
            ``target_ids`` and ``target_ids`` is absent from the row.
    """

    prompt_ids: List[int]
    input_ids: NotRequired[List[int]]
    target_ids: NotRequired[List[int]]


class InfillingCollatorInput(TypedDict):
    input_ids: List[int]  # inputs with blanks (masks)
    target_ids: List[int]  # targets with all tokens


class DefaultCollator(Collator):
    """Simply stacks the input_ids, attention_mask, and token_type_ids and returns a batch."""

    def __init__(
        self,
        tokenizer: Tokenizer,
        block_size: int,
        noise_schedule: NoiseSchedule,
    ):
        self.tokenizer = tokenizer
        self.block_size = block_size
        self.noise_schedule = noise_schedule

    @property
    def vocab_size(self) -> int:
        if self.tokenizer is None:
            raise RuntimeError("Tokenizer not set")
        return len(self.tokenizer)

    def __call__(
        self,
        examples: List[BaseCollatorInput],
    ) -> BaseBatch:
        return {
            "input_ids": torch.stack(
                [torch.tensor(e["input_ids"]) for e in examples]
            ),
            "attention_mask": torch.stack(
                [torch.tensor(e["attention_mask"]) for e in examples]
            ),
            "token_type_ids": torch.stack(
                [torch.tensor(e["token_type_ids"]) for e in examples]
            ),
        }


def pad_truncate(
    examples,
    max_len,
    pad_token_id,
    attn_extension: int = 0,
    type_extension: int = 2,
) -> BaseBatch:
    return {
        "input_ids": torch.tensor(
            [
                example["input_ids"][:max_len]
                + [pad_token_id] * max(0, max_len - len(example["input_ids"]))
                for example in examples
            ],
            dtype=torch.long,
        ),
        "attention_mask": torch.tensor(
            [
                example["attention_mask"][:max_len]
                + [attn_extension]
                * max(0, max_len - len(example["attention_mask"]))
                for example in examples
            ],
            dtype=torch.long,
        ),
        "token_type_ids": torch.tensor(
            [
                example["token_type_ids"][:max_len]
                + [type_extension]
                * max(0, max_len - len(example["token_type_ids"]))
                for example in examples
            ],
            dtype=torch.long,
        ),
    }


def pad_prefix_suffix(tokenizer, examples, max_seq_len) -> BaseBatch:
    """
    [<varibale prefix>] [<bos> <variable suffix> <eos>]
    """
    prefixes = []
    suffixes = []
    max_prefix_len = 0
    max_suffix_len = 0
    for example in examples:
        bos_index = example["input_ids"].index(tokenizer.bos_token_id)
        prefix = example["input_ids"][: bos_index + 1]
        max_prefix_len = max(max_prefix_len, len(prefix))
        suffix = example["input_ids"][bos_index + 1 :]
        max_suffix_len = max(max_suffix_len, len(suffix))
        prefixes.append(prefix)
        suffixes.append(suffix)
    return {
        "input_ids": torch.tensor(
            [
                [tokenizer.pad_token_id]
                * max(0, max_prefix_len - len(prefixes[i]))
                + prefixes[i][:max_prefix_len]
                + suffixes[i][:max_suffix_len]
                + [tokenizer.pad_token_id]
                * max(0, max_suffix_len - len(suffixes[i]))
                for i in range(len(examples))
            ][:max_seq_len],
            dtype=torch.long,
        ),
        "attention_mask": torch.tensor(
            [
                [0] * max(0, max_prefix_len - len(prefixes[i]))
                + [1] * len(prefixes[i])
                + [0] * len(suffixes[i])
                + [0] * max(0, max_suffix_len - len(suffixes[i]))
                for i in range(len(examples))
            ][:max_seq_len],
            dtype=torch.long,
        ).bool(),
        "token_type_ids": torch.tensor(
            [
                [2] * max(0, max_prefix_len - len(prefixes[i]))
                + [1] * len(prefixes[i])
                + [2] * len(suffixes[i])
                + [2] * max(0, max_suffix_len - len(suffixes[i]))
                for i in range(len(examples))
            ][:max_seq_len],
            dtype=torch.long,
        ),
    }


def pad_prefix_suffix2(
    examples,
    max_seq_len,
    pad_token_id,
    bos_token_id,
    eos_token_id,
    prefix_type_extension=0,
    suffix_type_extension=2,
    return_tensors=True,
) -> Union[BaseBatch, Dict[str, List[List[int]]]]:
    """
    [<varibale prefix>] [<bos> <variable suffix> <eos>]
    """
    prefixes = []
    suffixes = []
    max_prefix_len = 0
    max_suffix_len = 0
    for example in examples:
        bos_index = example["input_ids"].index(bos_token_id)
        prefix = example["input_ids"][: bos_index + 1]
        max_prefix_len = max(max_prefix_len, len(prefix))
        suffix = example["input_ids"][bos_index + 1 :]
        max_suffix_len = max(max_suffix_len, len(suffix))
        prefixes.append(prefix)
        suffixes.append(suffix)
    input_ids = [
        [pad_token_id] * max(0, max_prefix_len - len(prefixes[i]))
        + prefixes[i][:max_prefix_len]
        + suffixes[i][:max_suffix_len]
        + [pad_token_id] * max(0, max_suffix_len - len(suffixes[i]))
        for i in range(len(examples))
    ]
    attention_mask = [
        [0] * max(0, max_prefix_len - len(prefixes[i]))
        + [1] * len(prefixes[i])
        + [0] * len(suffixes[i])
        + [0] * max(0, max_suffix_len - len(suffixes[i]))
        for i in range(len(examples))
    ]
    token_type_ids = [
        [prefix_type_extension] * max(0, max_prefix_len - len(prefixes[i]))
        + [1] * len(prefixes[i])
        + [suffix_type_extension] * len(suffixes[i])
        + [suffix_type_extension] * max(0, max_suffix_len - len(suffixes[i]))
        for i in range(len(examples))
    ]
    if return_tensors:
        input_ids = torch.tensor(input_ids, dtype=torch.long)  # type: ignore
        attention_mask = torch.tensor(attention_mask, dtype=torch.bool)  # type: ignore
        token_type_ids = torch.tensor(token_type_ids, dtype=torch.long)  # type: ignore

    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
    }


def pad_left_truncate(
    examples,
    max_len,
    pad_token_id,
    attn_extension: int = 0,
    type_extension: int = 2,
    return_tensors: bool = True,
) -> Union[BaseBatch, Dict[str, List[List[int]]]]:
    input_ids: List[List[int]] = [
        [pad_token_id] * max(0, max_len - len(example["input_ids"]))
        + example["input_ids"][:max_len]
        for example in examples
    ]
    attention_mask: List[List[int]] = [
        [attn_extension] * max(0, max_len - len(example["attention_mask"]))
        + example["attention_mask"][:max_len]
        for example in examples
    ]
    token_type_ids: List[List[int]] = [
        [type_extension] * max(0, max_len - len(example["token_type_ids"]))
        + example["token_type_ids"][:max_len]
        for example in examples
    ]
    if return_tensors:
        input_ids = torch.tensor(input_ids, dtype=torch.long)  # type: ignore
        attention_mask = torch.tensor(attention_mask, dtype=torch.bool)  # type: ignore
        token_type_ids = torch.tensor(token_type_ids, dtype=torch.long)  # type: ignore

    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
    }


def pad_dynamic(
    examples,
    pad_token_id,
    attn_extension: int = 0,
    type_extension: int = 2,
) -> BaseBatch:
    max_len = max(len(e["input_ids"]) for e in examples)
    return pad_truncate(
        examples,
        max_len,
        pad_token_id,
        attn_extension=attn_extension,
        type_extension=type_extension,
    )


class DefaultCollatorWithPadding(DefaultCollator):
    """Like DefaultCollator, but pads (truncates if needed) the input_ids, attention_mask, and token_type_ids to self.max_length."""

    def get_max_len(self, examples: List[BaseCollatorInput]) -> int:
        return self.block_size

    def __call__(self, examples: List[BaseCollatorInput]) -> BaseBatch:
        max_len = self.get_max_len(examples)
        return pad_truncate(
            examples,
            max_len,
            self.tokenizer.pad_token_id,
            attn_extension=0,
            type_extension=2,
        )


class DefaultCollatorWithDynamicPadding(DefaultCollatorWithPadding):
    """Like DefaultCollator, but pads to the max length in the batch."""

    def get_max_len(self, examples: List[BaseCollatorInput]) -> int:
        max_in_batch = max(len(e["input_ids"]) for e in examples)
        return min(max_in_batch, self.block_size)


# endregion: Collators
################################################################################


################################################################################
# region: Utilities


def print_batch_base(
    batch: Dict[str, Any],
    split: Literal["train", "val", "test", "predict"],
    tokenizer: Tokenizer,
    dataloader_name: str = "",
):

    logger.info(
        f"Printing first entries of the tensors in batch for {split}/{dataloader_name}..."
    )
    print("input tokens:")
    print(tokenizer.decode(batch["input_ids"][0]))
    print("input_ids:")
    print(batch["input_ids"][0])
    print("attention_mask:")
    print(batch["attention_mask"][0])
    print("token_type_ids:")
    print(batch["token_type_ids"][0])


# endregion: Utilities
################################################################################
