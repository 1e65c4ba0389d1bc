"""TensorBoard event files: each trial's trials/<id>/events.out.tfevents.cohort holds its reports
as TFRecord-framed tensorflow.Event messages (checked here against both masked CRC-32Cs and
decoded field by field): the file version first, then one event per line of metrics.jsonl, in
order, with the same step and values. When a killed worker restarts from its checkpoint, the
reports after that checkpoint leave metrics.jsonl and the event file alike."""
import os
import signal
import struct

from cohort_cli import *

BATCHES = interruptible(3000)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(data):
    """(number, value) of each protobuf field: ints for varint and fixed, bytes for the rest."""
    at, out = 0, []
    while at < len(data):
        key, at = varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, at = varint(data, at)
        elif kind == 1:
            value, at = data[at:at + 8], at + 8
        elif kind == 5:
            value, at = data[at:at + 4], at + 4
        elif kind == 2:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        else:
            raise AssertionError(f"wire type {kind}")
        out.append((number, value))
    return out


def events(path):
    with open(path, "rb") as f:
        data = f.read()
    at, out = 0, []
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        check(struct.unpack("<I", data[at + 8:at + 12])[0] == masked(header), "header CRC")
        body = data[at + 12:at + 12 + length]
        check(struct.unpack("<I", data[at + 12 + length:at + 16 + length])[0] == masked(body),
              "data CRC")
        at += 16 + length
        event = {"scalars": {}}
        for number, value in fields(body):
            if number == 1:
                event["wall_time"] = struct.unpack("<d", value)[0]
            elif number == 2:
                event["step"] = value
            elif number == 3:
                event["file_version"] = value.decode()
            elif number == 5:
                for _, scalar in fields(value):
                    parts = dict(fields(scalar))
                    event["scalars"][parts[1].decode()] = struct.unpack("<f", parts[2])[0]
        out.append(event)
    return out


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))  # float32 in the event, double in the JSON


with temp_dir() as tmp:
    config = mlp_config(tmp, batches=BATCHES, period=100, hidden_size=128, max_restarts=1)
    run_dir = os.path.join(tmp, "run")
    process = start("run", config, "--output", run_dir)
    wait_for(lambda: experiment(run_dir)["trials"][0]["checkpoints"], what="the first checkpoint")
    # Killed once a report after the checkpoint is written, so there is something to forget.
    checkpointed = experiment(run_dir)["trials"][0]["checkpoints"][-1]["batches"]
    wait_for(lambda: metrics(run_dir)[-1]["batches"] > checkpointed,
             what="a report after the checkpoint")
    pid = worker_pid(0, run_dir)
    check(pid is not None, "no worker process found")
    os.kill(pid, signal.SIGKILL)
    out, err = process.communicate(timeout=300)
    check(process.returncode == 0, f"exit {process.returncode}:\n{out}\n{err}")
    check(experiment(run_dir)["trials"][0]["restarts"] == 1, experiment(run_dir))

    written = events(os.path.join(run_dir, "trials", "1", "events.out.tfevents.cohort"))
    check(written[0].get("file_version") == "brain.Event:2", written[0])
    reports = metrics(run_dir)
    check(len(written) == len(reports) + 1,
          f"{len(written) - 1} events for {len(reports)} reports in metrics.jsonl")
    for event, report in zip(written[1:], reports):
        check(event["step"] == report["batches"], (event, report))
        check(close(event["wall_time"], report["time"]), (event, report))
        prefix = "training/" if report["kind"] == "training" else "validation/"
        for name, value in report["metrics"].items():
            check(close(event["scalars"][prefix + name], value), (event, report))
        if report["kind"] == "training":
            for phase, seconds in report["timings"].items():
                check(close(event["scalars"]["timings/" + phase], seconds), (event, report))
            check(close(event["scalars"]["throughput/records_per_second"],
                        report["records_per_second"]), (event, report))
    steps = [e["step"] for e in written[1:] if "training/loss" in e["scalars"]]
    check(steps == sorted(set(steps)), f"training steps repeat or go back: {steps}")
print("ok")
