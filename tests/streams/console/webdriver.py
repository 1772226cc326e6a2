"""Debian's headless Chromium driven through ``chromedriver`` by the W3C WebDriver protocol (plain HTTP JSON).

Just what the console's browser test needs: open a page, find elements, type, click, read text, take
a screenshot. ``browser()`` skips the test with one line where Chromium or its driver is missing.
"""

from __future__ import annotations

import base64
import contextlib
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import free_ports

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")


def ref(found: dict[str, str]) -> str:
    """An element reference's id (the protocol's one-key object)."""
    (value,) = found.values()
    return value


class Element:
    def __init__(self, browser: Browser, ref: str) -> None:
        self.browser, self.ref = browser, ref

    @property
    def text(self) -> str:
        return str(self.browser.call("GET", f"/element/{self.ref}/text"))

    def attribute(self, name: str) -> str | None:
        return self.browser.call("GET", f"/element/{self.ref}/attribute/{name}")  # type: ignore[no-any-return]

    def find_all(self, css: str) -> list[Element]:
        found = self.browser.call(
            "POST", f"/element/{self.ref}/elements", {"using": "css selector", "value": css}
        )
        return [Element(self.browser, ref(e)) for e in found]

    def type(self, text: str) -> None:
        self.browser.call("POST", f"/element/{self.ref}/value", {"text": text})

    def click(self) -> None:
        self.browser.call("POST", f"/element/{self.ref}/click", {})


class Browser:
    """One WebDriver session of headless Chromium."""

    def __init__(self, http: httpx.Client, session: str, shots: Path) -> None:
        self.http, self.session, self.shots = http, session, shots

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        r = self.http.request(method, f"/session/{self.session}{path}", json=body)
        value = r.json()["value"]
        if r.status_code >= 400:
            raise AssertionError(f"webdriver {method} {path}: {value.get('error')}: {value.get('message')}")
        return value

    def open(self, url: str) -> None:
        self.call("POST", "/url", {"url": url})

    @property
    def url(self) -> str:
        return str(self.call("GET", "/url"))

    @property
    def title(self) -> str:
        return str(self.call("GET", "/title"))

    def find_all(self, css: str) -> list[Element]:
        return [
            Element(self, ref(e))
            for e in self.call("POST", "/elements", {"using": "css selector", "value": css})
        ]

    def find(self, css: str) -> Element:
        found = self.find_all(css)
        assert found, f"no element {css!r} on {self.url}"
        return found[0]

    def wait(self, until: Callable[[], bool], what: str, timeout: float = 30) -> None:
        """Poll ``until`` after a click: a submitted form's page loads after the click's reply under load."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(AssertionError):  # an element of the page being left goes stale
                if until():
                    return
            assert time.monotonic() < deadline, f"{what}: not reached in {timeout:.0f} s (at {self.url})"
            time.sleep(0.1)

    def screenshot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        path.write_bytes(base64.b64decode(self.call("GET", "/screenshot")))
        return path


@contextlib.contextmanager
def browser(tmp: Path) -> Iterator[Browser]:
    """A headless Chromium session; screenshots go to ``tmp/screenshots``."""
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    (port,) = free_ports(1)
    log = (tmp / "chromedriver.log").open("wb")
    driver = subprocess.Popen([DRIVER, f"--port={port}"], stdout=log, stderr=subprocess.STDOUT)
    http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(httpx.TransportError):
                if http.get("/status").json()["value"]["ready"]:
                    break
            assert time.monotonic() < deadline, "chromedriver did not start"
            time.sleep(0.2)
        options = {
            "binary": CHROMIUM,
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--window-size=1400,1000",
                f"--user-data-dir={tmp / 'profile'}",
            ],
        }
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": options}}}
        session = http.post("/session", json=caps).json()["value"]["sessionId"]
        shots = tmp / "screenshots"
        shots.mkdir(exist_ok=True)
        try:
            yield Browser(http, session, shots)
        finally:
            http.delete(f"/session/{session}")
    finally:
        http.close()
        driver.terminate()
        driver.wait(10)
        log.close()
