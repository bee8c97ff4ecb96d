"""The Python client against a real `ptxbench-testing serve` with fake GPU workers.

    PTXB_TESTING_CLI=build/ptxbench-testing python3 -m unittest discover -s python/tests
Skipped when PTXB_TESTING_CLI is not set.
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

# From the source tree, unless tests/python/installed_client_test.sh runs them against the
# package `pip install ./python` installed (then only that one is importable).
INSTALLED_AT = os.environ.get("PTXB_CLIENT_INSTALLED_AT")
if not INSTALLED_AT:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import ptxbench_client  # noqa: E402
from ptxbench_client import Client, ServiceError  # noqa: E402

CLI = os.environ.get("PTXB_TESTING_CLI")


@unittest.skipUnless(INSTALLED_AT, "PTXB_CLIENT_INSTALLED_AT not set (source-tree run)")
class InstalledPackageTest(unittest.TestCase):
    def test_the_installed_package_is_the_one_imported(self):
        where = os.path.realpath(ptxbench_client.__file__)
        self.assertTrue(where.startswith(os.path.realpath(INSTALLED_AT) + os.sep), where)


@unittest.skipUnless(CLI, "PTXB_TESTING_CLI not set")
class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ptxb-pyclient-")
        with open(os.path.join(cls.dir, "tokens"), "w") as f:
            f.write("py py-token-0123456789abc\n")
        cls.out = open(os.path.join(cls.dir, "serve.out"), "w+")
        cls.proc = subprocess.Popen(
            [CLI, "serve", "--listen", "127.0.0.1:0", "--gpus", "0", "--db",
             os.path.join(cls.dir, "jobs.db"), "--tokens", os.path.join(cls.dir, "tokens"),
             "--test-fake-workers", cls.dir], stdout=cls.out, stderr=subprocess.DEVNULL)
        for _ in range(200):
            cls.out.seek(0)
            m = re.search(r"http://\S+", cls.out.read())
            if m:
                cls.url = m.group(0)
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("service did not start")
        cls.client = Client(cls.url, token="py-token-0123456789abc")

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(10)

    def test_evaluate_returns_the_result_dict(self):
        src = "// ptxbench-fake-eval: status=PASSED speedup=1.25 tag=py1\n"
        result = self.client.evaluate(src, task="gemm_n7168_k5120")
        self.assertEqual(result["status"], "PASSED")
        self.assertAlmostEqual(result["workloads"][0]["speedup"], 1.25)

    def test_idempotency_key_returns_the_same_job(self):
        src = "// ptxbench-fake-eval: tag=py2\n"
        a = self.client.submit(src, "gemm_n7168_k5120", idempotency_key="k")
        b = self.client.submit(src, "gemm_n7168_k5120", idempotency_key="k")
        self.assertEqual(a["id"], b["id"])
        self.assertFalse(b["created"])

    def test_operations_sanitize_profile_and_debug(self):
        src = "// ptxbench-fake-eval: status=PASSED speedup=1.5 tag=pyop\n"
        sanitized = self.client.sanitize(src, task="gemm_n7168_k5120")
        self.assertEqual(sanitized["status"], "PASSED")
        self.assertTrue(sanitized["options"]["sanitize"])
        self.assertIsNone(sanitized["workloads"][0]["speedup"])  # nothing timed
        self.assertIn("operation sanitize", sanitized["message"])
        profiled = self.client.profile(src, task="gemm_n7168_k5120")
        self.assertTrue(profiled["options"]["ncu"])
        self.assertAlmostEqual(profiled["workloads"][0]["speedup"], 1.5)
        self.assertIn("operation profile", profiled["message"])
        debugged = self.client.debug(src, task="gemm_n7168_k5120")
        self.assertTrue(debugged["options"]["debug"])
        self.assertIsNone(debugged["workloads"][0]["speedup"])  # nothing timed
        self.assertIn("operation debug", debugged["message"])
        with self.assertRaises(ServiceError) as e:
            self.client.submit(src, "gemm_n7168_k5120", operation="gdb")
        self.assertEqual((e.exception.status, e.exception.code), (400, "unsupported_operation"))
        with self.assertRaises(ServiceError) as e:
            self.client.profile(src, task="gemm_n7168_k5120", options={"ncu": False})
        self.assertEqual((e.exception.status, e.exception.code), (400, "invalid"))

    def test_errors_carry_their_code(self):
        with self.assertRaises(ServiceError) as e:
            self.client.submit("x", "no_such_task")
        self.assertEqual((e.exception.status, e.exception.code), (400, "unknown_task"))
        with self.assertRaises(ServiceError) as e:
            Client(self.url, token="wrong-token-0123456789").health()
        self.assertEqual(e.exception.status, 401)

    def test_catalogue_lists_the_tasks(self):
        names = [t["name"] for t in self.client.tasks()]
        self.assertIn("gemm_n7168_k5120", names)


if __name__ == "__main__":
    unittest.main()
