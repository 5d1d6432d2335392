"""Steps a MuJoCo Warp model on Warp's CPU device (or the device named): the cold start a user
of MuJoCo Warp pays at the first mjw.step. Usage: mjwarp_step.py MODEL.xml [STEPS] [DEVICE]."""
import sys

import mujoco
import mujoco_warp as mjw
import warp as wp


def main(xml, steps=3, device="cpu"):
    mjm = mujoco.MjModel.from_xml_path(xml)
    mjd = mujoco.MjData(mjm)
    with wp.ScopedDevice(device):
        m = mjw.put_model(mjm)
        d = mjw.put_data(mjm, mjd)
        for _ in range(steps):
            mjw.step(m, d)
        wp.synchronize()
        print("ok", float(d.qpos.numpy().sum()))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3, sys.argv[3] if len(sys.argv) > 3 else "cpu")
