"""`cohort doctor` on this machine, and on GPUs described by a stand-in NVML library.

Usage: doctor_test.py COHORT_EXE FAKE_NVML

On a host without the NVIDIA driver (CI), doctor must say plainly that there is no GPU and exit
1, while still checking the runtime modules and the plugin folders. With FAKE_NVML (fake_nvml.cc)
standing in for the driver's library it must list the GPUs it describes, warn about mixed
models, draw the links, and name a stale CUDA_VISIBLE_DEVICES. Where a real driver and GPU are
present, only the plain run is checked (it must then exit 0 or name its PROBLEM).
"""
import os
import subprocess
import sys


def doctor(exe, **env):
    full = dict(os.environ)
    for name in [n for n in full if n.startswith("NCCL_") or n == "CUDA_VISIBLE_DEVICES"]:
        del full[name]
    full.update(env)
    done = subprocess.run([exe, "doctor"], env=full, capture_output=True, text=True, timeout=120)
    print(f"--- cohort doctor {env} -> exit {done.returncode}\n{done.stdout}{done.stderr}")
    return done


def expect(condition, message):
    if not condition:
        sys.exit(f"FAIL: {message}")


def main():
    exe, fake_nvml = sys.argv[1], sys.argv[2]
    has_driver = os.path.isdir("/proc/driver/nvidia/gpus") and os.listdir("/proc/driver/nvidia/gpus")

    plain = doctor(exe)
    expect(plain.returncode in (0, 1), "exit status is 0 or 1")
    expect("[ok] modules" in plain.stdout or "modules:" in plain.stdout, "the modules are checked")
    expect("plugins: entrypoint names are looked up in" in plain.stdout, "the plugin folders are listed")
    if not has_driver:
        expect(plain.returncode == 1, "no GPU: exit 1")
        expect("This host has no usable NVIDIA GPU" in plain.stdout, "says plainly there is no GPU")
        expect("no NVIDIA driver" in plain.stdout, "names the missing driver")
    elif plain.returncode == 1:
        expect("PROBLEM" in plain.stdout, "a host that cannot run GPU trials says why")

    gpus = "NVIDIA H100 80GB HBM3,90,40000,81559,GPU-1111;NVIDIA A100-SXM4-40GB,60,20000,40960,GPU-2222"
    described = doctor(exe, COHORT_NVML_LIBRARY=fake_nvml, COHORT_FAKE_NVML=gpus,
                       COHORT_FAKE_NVML_LINK="50", CUDA_VISIBLE_DEVICES="0,GPU-9999",
                       NCCL_SOCKET_IFNAME="=nosuchif0")
    out = described.stdout
    expect("driver 999.99-fake, 2 GPU(s)" in out, "lists the driver's GPUs")
    expect("mixed GPU models" in out and "NVIDIA A100-SXM4-40GB (GPU 1)" in out, "warns about mixed models")
    expect("0-1 (SYS)" in out, "draws the links and warns about SYS")
    expect("GPU-9999" in out, "names the stale CUDA_VISIBLE_DEVICES entry")
    expect("NCCL_SOCKET_IFNAME==nosuchif0 selects none" in out, "refuses an interface that does not exist")
    expect(described.returncode == 1, "a missing interface is a problem")
    print("doctor_test: OK")


if __name__ == "__main__":
    main()
