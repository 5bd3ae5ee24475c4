"""zygote.arm_wait_s: when a pending armed spare may be forked (a pure decision, no processes).

A fork of the zygote must never stand between a back-to-back job's message and its spare: with a
spare already waiting, arms fork a few ms into a running job or after the zygote was idle a while;
with none waiting, at once.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox", "harness"))
import zygote  # noqa: E402


class ArmWait(unittest.TestCase):
    def test_no_spare_waiting_forks_at_once(self):
        self.assertEqual(zygote.arm_wait_s(10.0, False, 9.99, 9.999, False), 0.0)
        self.assertEqual(zygote.arm_wait_s(10.0, True, 9.9999, 9.0, False), 0.0)

    def test_a_running_job_gets_its_head_start_first(self):
        wait = zygote.arm_wait_s(10.0, True, 10.0, 9.0, True)
        self.assertAlmostEqual(wait, zygote.ARM_INTO_JOB_S)
        self.assertEqual(zygote.arm_wait_s(10.0 + zygote.ARM_INTO_JOB_S, True, 10.0, 9.0, True), 0.0)

    def test_right_after_a_job_ended_the_next_one_is_not_raced(self):
        # A job just ended: its successor's message is on its way; wait for the idle time.
        wait = zygote.arm_wait_s(10.0, False, 9.98, 10.0, True)
        self.assertAlmostEqual(wait, zygote.ARM_WHEN_IDLE_S)
        self.assertGreater(wait, zygote.ARM_INTO_JOB_S)
        self.assertEqual(zygote.arm_wait_s(10.0 + zygote.ARM_WHEN_IDLE_S, False, 9.98, 10.0, True), 0.0)


if __name__ == "__main__":
    unittest.main()
