#!/usr/bin/env python3
"""A tiny model and dataset for running generated TRL pilot scripts on the CPU, built locally.

Usage: trl_fixture.py OUT_DIR

Writes OUT_DIR/model/ (a Qwen2-architecture model of about 100k parameters with a byte-level BPE
tokenizer and a chat template; nothing is downloaded) and OUT_DIR/data/{train,test}.jsonl (the
add-two-digits task in the shape the launch scripts document: a conversational `prompt` column
and a `solution` column with the answer in \\boxed{}). A few seconds of supervised training teach
the model the answer format, so TRL's accuracy_reward is sometimes 1 and the GRPO loss, KL and
advantages move; the test asserts on steps and data, not on learning. Seeded: the same files on
every run.
"""
import json
import os
import random
import sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

SEED = 0
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def problems(n, rng):
    """`n` add-two-digits problems as the scripts' DATASET documents them."""
    rows = []
    for _ in range(n):
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        rows.append({
            "prompt": [{"role": "user", "content": f"What is {a}+{b}?"}],
            "solution": f"\\boxed{{{a + b}}}",
        })
    return rows


def tokenizer():
    """A byte-level BPE (any text round-trips, `\\boxed{7}` included) with a ChatML template."""
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [f"What is {a}+{b}? The answer is \\boxed{{{a + b}}}." for a in range(10) for b in range(10)]
    tok.train_from_iterator(corpus + ["user", "assistant", "\n"], trainer=trainers.BpeTrainer(
        vocab_size=320, special_tokens=SPECIAL, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        model_max_length=512, padding_side="left")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def teach_format(model, tok, steps, rng):
    """A short supervised loop on the answers (prompt tokens masked)."""
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(steps):
        texts, prompt_lengths = [], []
        for row in problems(32, rng):
            prompt = tok.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
            texts.append(prompt + row["solution"] + "<|im_end|>")
            prompt_lengths.append(len(tok(prompt)["input_ids"]))
        batch = tok(texts, return_tensors="pt", padding=True)
        labels = batch["input_ids"].clone()
        padding = (batch["attention_mask"] == 0).sum(1)
        for i, (pad, length) in enumerate(zip(padding.tolist(), prompt_lengths)):
            labels[i, : pad + length] = -100
        model(**batch, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()


def main(out):
    torch.set_num_threads(1)
    random.seed(SEED)
    torch.manual_seed(SEED)
    model_dir, data_dir = os.path.join(out, "model"), os.path.join(out, "data")
    os.makedirs(model_dir, exist_ok=True)
    os.makedirs(data_dir, exist_ok=True)
    tok = tokenizer()
    tok.save_pretrained(model_dir)
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        tie_word_embeddings=True, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id))
    model.generation_config = GenerationConfig(
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, do_sample=True)
    teach_format(model, tok, 150, random.Random(SEED + 1))
    model.save_pretrained(model_dir)
    rng = random.Random(SEED)
    for split, n in (("train", 256), ("test", 16)):
        with open(os.path.join(data_dir, f"{split}.jsonl"), "w") as f:
            for row in problems(n, rng):
                f.write(json.dumps(row) + "\n")
    print(f"trl_fixture: {model_dir} ({sum(p.numel() for p in model.parameters())} parameters), {data_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
