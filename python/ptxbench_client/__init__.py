"""Pure-Python client of `ptxbench serve` (docs/service.md): submit, wait, result as a dict.

Standard library only (urllib), so RL and training loops can `pip install ./python` anywhere.

    from ptxbench_client import Client
    c = Client("http://127.0.0.1:8470", token=None)
    result = c.evaluate(open("kernel.cu").read(), task="gemm_n7168_k5120")
    reward = result["workloads"][0].get("speedup") if result["status"] == "PASSED" else 0.0
    clean = c.sanitize(source, task="gemm_n7168_k5120")["status"] == "PASSED"
    target = c.profile(source, task="gemm_n7168_k5120")["target_instructions"]["verdict"]

Operations (docs/service.md "Operations"): "evaluate" (correctness, timing, the checks),
"sanitize" (the compute-sanitizer gate and the correctness trials, nothing timed), "profile"
(evaluate with the Nsight Compute target-instruction check forced on).
"""
import hashlib
import json
import time
import urllib.error
import urllib.request

__all__ = ["Client", "ServiceError", "OPERATIONS"]

OPERATIONS = ("evaluate", "sanitize", "profile")


class ServiceError(Exception):
    """An error answer of the service: `status` (HTTP), `code` (invalid, quota, ...)."""

    def __init__(self, status, code, message):
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class Client:
    def __init__(self, base_url, token=None, timeout=60.0, busy_retries=20):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.busy_retries = busy_retries

    def _call(self, method, path, body=None, content_type="application/json", timeout=None):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        for attempt in range(self.busy_retries + 1):
            req = urllib.request.Request(self.base_url + path, data=data, method=method)
            req.add_header("Content-Type", content_type)
            if self.token:
                req.add_header("Authorization", "Bearer " + self.token)
            try:
                with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                    text = resp.read()
                    return json.loads(text) if text else {}
            except urllib.error.HTTPError as e:
                text = e.read()
                if e.code in (429, 503) and attempt < self.busy_retries:
                    time.sleep(min(float(e.headers.get("Retry-After") or 1), 30.0))
                    continue
                try:
                    err = json.loads(text)["error"]
                    raise ServiceError(e.code, err.get("code", "http"), err.get("message", ""))
                except (ValueError, KeyError, TypeError):
                    raise ServiceError(e.code, "http", text.decode(errors="replace"))

    def health(self):
        return self._call("GET", "/v1/health")

    def tasks(self):
        return self._call("GET", "/v1/tasks")["tasks"]

    def submit(self, source, task, options=None, arch="", idempotency_key=None, name="kernel.cu",
               operation="evaluate"):
        """Submits a kernel source (uploaded only when the service lacks it); the job dict.

        `operation` is one of OPERATIONS; another is refused by the service (400
        unsupported_operation), and so is an option that contradicts it (400 invalid)."""
        blob = source.encode() if isinstance(source, str) else source
        sha = hashlib.sha256(blob).hexdigest()
        body = {"operation": operation, "task": task, "arch": arch,
                "artifact": {"sha256": sha, "name": name}, "options": options or {}}
        if idempotency_key:
            body["idempotency_key"] = idempotency_key
        try:
            return self._call("POST", "/v1/jobs", body)
        except ServiceError as e:
            if e.code != "artifact_missing":
                raise
        self._call("PUT", "/v1/artifacts/" + sha, blob, "application/octet-stream")
        return self._call("POST", "/v1/jobs", body)

    def wait(self, job_id, timeout=3600.0):
        """Long-polls until the job is done, failed or cancelled; the job dict."""
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.0, min(30.0, deadline - time.monotonic()))
            job = self._call("GET", f"/v1/jobs/{job_id}?wait={left:.3f}", timeout=left + 30)
            if job["state"] in ("done", "failed", "cancelled") or left <= 0:
                return job

    def result(self, job_id):
        return self._call("GET", f"/v1/jobs/{job_id}/result")

    def cancel(self, job_id):
        return self._call("POST", f"/v1/jobs/{job_id}/cancel")

    def evaluate(self, source, task, options=None, timeout=3600.0, **kwargs):
        """submit + wait + result: the EvalResult dict (as `ptxbench eval --json`)."""
        job = self.wait(self.submit(source, task, options, **kwargs)["id"], timeout)
        if job["state"] != "done":
            raise ServiceError(200, "job_" + job["state"], job.get("reason") or "")
        return self.result(job["id"])

    def sanitize(self, source, task, options=None, timeout=3600.0, **kwargs):
        """The compute-sanitizer gate and the correctness trials: PASSED is clean and correct;
        nothing is timed (no speedup). options["sanitizer_tool"] picks the tool (memcheck)."""
        return self.evaluate(source, task, options, timeout, operation="sanitize", **kwargs)

    def profile(self, source, task, options=None, timeout=3600.0, **kwargs):
        """The evaluation with the Nsight Compute check forced on; read
        result["target_instructions"]["verdict"] (dynamic_present, ...) and the latency."""
        return self.evaluate(source, task, options, timeout, operation="profile", **kwargs)

    def debug(self, source, task, options=None, timeout=3600.0, **kwargs):
        """The correctness trials with the debug stage on: a RUNTIME_ERROR, MEMORY_ERROR or
        TIMEOUT comes back with result["debug"] (points_at: the kernel.cu line; summary: the
        feedback's text); nothing is timed."""
        return self.evaluate(source, task, options, timeout, operation="debug", **kwargs)
