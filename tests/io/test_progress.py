from corpus_miner.io.progress import byte_progress, input_bytes


def test_input_bytes_sums_files_and_folders(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(b"x" * 10)
    folder = tmp_path / "parts"
    (folder / "deep").mkdir(parents=True)
    (folder / "p1").write_bytes(b"y" * 7)
    (folder / "deep" / "p2").write_bytes(b"z" * 5)
    assert input_bytes([tmp_path / "a.jsonl", folder]) == 22
    assert input_bytes([tmp_path / "a.jsonl", "-"]) is None  # stdin: size unknown
    assert input_bytes([tmp_path / "missing"]) is None


def test_byte_progress_counts_bytes():
    bar = byte_progress()
    task = bar.add_task("reading", total=100)
    bar.update(task, completed=40)
    assert bar.tasks[0].completed == 40 and bar.tasks[0].total == 100
