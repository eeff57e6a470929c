"""Write a tiny llama-architecture GGUF model with random weights, for tests against llama-server.

The model says nothing useful: it exists so that a real model server can be exercised end to end
(HTTP API, chat template, grammar-constrained JSON output, token usage, max_tokens truncation)
in well under a second per request on a CPU. It is generated, never downloaded, and is
byte-identical for a given seed.

    python tools/llm/make_tiny_model.py OUT.gguf [--seed N]

Shape: 2 layers, 64 hidden, 4 heads, feed-forward 128, a SentencePiece-style vocabulary with
the 256 byte-fallback tokens, a ChatML chat template and `<|im_end|>` as end of generation.
"""

from __future__ import annotations

import argparse
import string
import sys
from pathlib import Path

import numpy as np

ARCH = "llama"
N_LAYERS = 2
N_EMBD = 64
N_HEAD = 4
N_FF = 128
CONTEXT_LENGTH = 8192
DEFAULT_SEED = 1234

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# A newline cannot stand raw in a JSON string, so this piece is only ever valid where a value
# starts: biased above `"`, it makes every nullable field null.
NULL_VALUE = "\nnull"

# Multi-character pieces, so that prompts made of code, diffs and JSON take fewer tokens than
# one per character. "▁" is SentencePiece's marker for a preceding space.
_WORDS_TEXT = (
    "the of and to in is for on that with as be it this are not or by from at an if"
    " def return import class self None True False print assert raise except try elif else"
    " while yield async await lambda pass const let var function"
    " file line code diff review finding findings severity message title rule path"
    " error warning info critical high medium low note json schema string number"
    " TODO FIXME password secret key token"
)
_PIECES = ('":', '",', '": "', '{"', '"}', "[]", "{}", "()", "==", "!=", "->", "++", "--", "    ", "\n+", "\n-", "@@")


def build_vocab() -> tuple[list[str], list[float], list[int]]:
    """Tokens, scores and token types of a small SentencePiece ("llama") vocabulary."""
    from gguf import TokenType

    tokens: list[str] = ["<unk>", "<s>", "</s>"]
    types: list[int] = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [TokenType.BYTE] * 256
    tokens += ["<|im_start|>", "<|im_end|>"]
    types += [TokenType.CONTROL, TokenType.CONTROL]

    pieces: list[str] = ["▁"]
    for ch in string.ascii_letters + string.digits + string.punctuation:
        pieces += [ch, "▁" + ch]
    for word in _WORDS_TEXT.split():
        pieces += [word, "▁" + word]
    pieces += [p.replace(" ", "▁") for p in _PIECES] + [NULL_VALUE]
    seen = set(tokens)
    normal = [p for p in dict.fromkeys(pieces) if p not in seen]
    tokens += normal
    types += [TokenType.NORMAL] * len(normal)

    # SentencePiece merges the highest-scoring pair first: prefer longer pieces.
    scores = [0.0] * (len(tokens) - len(normal)) + [float(len(p)) - 100.0 for p in normal]
    return tokens, scores, [int(t) for t in types]


# Random weights alone make a model that rambles: under a JSON schema it fills every string to
# its maxLength and every array to its maxItems. So dimension 0 of every token embedding is a
# large constant, which survives the small random layers and the final RMS norm as a roughly
# constant positive activation (about BIAS_DIM_NORMED); column 0 of the output matrix then acts
# as a per-token logit bias, mostly set by the first character of the token. Under a findings
# schema the answer comes out short: the array opens one item (`{` over `]`) and then closes
# (`]` over `,`), strings close as soon as they may (`"` first), nullable values are null
# (NULL_VALUE over everything), and the end-of-turn token follows the closing brace.
BIAS_DIM_VALUE = 8.0
BIAS_DIM_NORMED = 5.6
_FIRST_CHAR_BIAS = {'"': 12.0, "{": 8.0, "]": 6.0, ",": 4.0, "n": 3.0}


def token_bias(token: str, token_type: int) -> float:
    """The logit bias of a token (see above)."""
    from gguf import TokenType

    if token == NULL_VALUE:
        return 14.0
    if token == "<|im_end|>":
        return 12.0
    if token_type == TokenType.BYTE:
        value = int(token[3:5], 16)
        return -4.0 if value < 0x20 or value == 0x7F else 0.0
    if token_type != TokenType.NORMAL:
        return -8.0
    if token.startswith("▁"):
        return -2.0
    return _FIRST_CHAR_BIAS.get(token[0], 1.0)


def write_model(path: Path, seed: int = DEFAULT_SEED) -> Path:
    import gguf

    tokens, scores, types = build_vocab()
    n_vocab = len(tokens)
    rng = np.random.default_rng(seed)

    def weights(*shape: int, std: float) -> np.ndarray:
        return (rng.standard_normal(shape) * std).astype(np.float32)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), ARCH)
    writer.add_name("review-gate tiny random model")
    writer.add_context_length(CONTEXT_LENGTH)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYERS)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(tokens.index("<unk>"))
    writer.add_bos_token_id(tokens.index("<s>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    # The server feeds the generation prompt ("<|im_start|>assistant\n") through the response grammar;
    # a space prefixed to the text after a special token would not match it.
    writer.add_add_space_prefix(False)
    writer.add_chat_template(CHATML_TEMPLATE)

    # numpy shapes are the reverse of GGML's (ne0 first): a (rows, cols) array is ne = [cols, rows].
    embeddings = weights(n_vocab, N_EMBD, std=1.0)
    embeddings[:, 0] = BIAS_DIM_VALUE
    writer.add_tensor("token_embd.weight", embeddings)
    for i in range(N_LAYERS):
        blk = f"blk.{i}"
        writer.add_tensor(f"{blk}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{blk}.{name}.weight", weights(N_EMBD, N_EMBD, std=0.05))
        writer.add_tensor(f"{blk}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"{blk}.ffn_gate.weight", weights(N_FF, N_EMBD, std=0.05))
        writer.add_tensor(f"{blk}.ffn_up.weight", weights(N_FF, N_EMBD, std=0.05))
        writer.add_tensor(f"{blk}.ffn_down.weight", weights(N_EMBD, N_FF, std=0.05))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    output = weights(n_vocab, N_EMBD, std=0.1)
    output[:, 0] = [token_bias(t, k) / BIAS_DIM_NORMED for t, k in zip(tokens, types, strict=True)]
    # Byte tokens 0x80-0xFF only ever form valid text in sequences; sampled at random they give
    # invalid UTF-8, which breaks string lengths in constrained JSON output. A zero row keeps
    # their logit at exactly 0, below every printable character's.
    first_byte = tokens.index("<0x00>")
    output[first_byte + 0x80 : first_byte + 0x100] = 0.0
    writer.add_tensor("output.weight", output)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="where to write the .gguf file")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    write_model(args.out, args.seed)
    sys.stdout.write(f"{args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
