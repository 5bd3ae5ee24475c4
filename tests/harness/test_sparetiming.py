"""zygote.arm_wait_s: when a pending armed spare may be forked (a pure decision, no processes).

A fork of the zygote must never stand between a back-to-back job's message and its spare: with a
spare already waiting, arms fork a few ms into a running job or after the zygote was idle a while;
with none waiting, at once.

harness.warm_spare's order: a plot spare armed for altair starts vl-convert's engine first and
without the pause; any other plot spare only after the pause, never when a job is waiting.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox", "harness"))
import harness  # noqa: E402
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


class WarmOrder(unittest.TestCase):
    """The steps are replaced by recorders (guard and plotlibs are real modules, their warm-ups
    are not run here): what is checked is which step runs when."""

    def setUp(self):
        import guard
        import plotlibs
        self.calls = []
        self.saved = (guard.warm_stub_index, plotlibs.warm_vl_convert)
        guard.warm_stub_index = lambda stop=None: self.calls.append("stub index")
        plotlibs.warm_vl_convert = lambda: self.calls.append("vl-convert engine")
        self.addCleanup(self.restore)

    def restore(self):
        import guard
        import plotlibs
        guard.warm_stub_index, plotlibs.warm_vl_convert = self.saved

    def test_an_altair_spare_starts_the_engine_first_and_without_the_pause(self):
        pauses = []

        def job_waiting(wait_s=0):
            pauses.append(wait_s)
            return False
        self.assertIn("altair", harness.SPARE_WARM_UPS["plot"])
        harness.warm_spare("plot", job_waiting, "altair")
        self.assertEqual(self.calls, ["vl-convert engine", "stub index"])
        self.assertNotIn(harness.VL_WARM_AFTER_IDLE_S, pauses)

    def test_another_plot_spare_starts_it_last_and_only_after_the_pause(self):
        pauses = []

        def job_waiting(wait_s=0):
            pauses.append(wait_s)
            return False
        harness.warm_spare("plot", job_waiting, "")
        self.assertEqual(self.calls, ["stub index", "vl-convert engine"])
        self.assertIn(harness.VL_WARM_AFTER_IDLE_S, pauses)

    def test_a_job_that_came_during_the_pause_stops_it(self):
        harness.warm_spare("plot", lambda wait_s=0: wait_s > 0, "matplotlib")
        self.assertEqual(self.calls, ["stub index"])

    def test_a_job_waiting_before_the_first_step_runs_none(self):
        self.assertEqual(harness.warm_spare("plot", lambda wait_s=0: True, "altair"), 0)
        self.assertEqual(self.calls, [])


if __name__ == "__main__":
    unittest.main()
