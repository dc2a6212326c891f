"""The web page end to end: a real uvicorn server and Debian's Chromium driven by Selenium.

`make test` installs chromium and chromium-driver (scripts/system-deps.sh); the test is
skipped, with the reason, only on machines set up without them.
"""

import shutil
import socket
import threading
import time

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from punctum.runtime import Punctuator, RestoreOptions  # noqa: E402
from punctum.serve import ServeConfig, create_app  # noqa: E402
from punctum.text import normalize  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                reason="needs Debian chromium + chromium-driver "
                                       "(scripts/system-deps.sh)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server_url():
    punctuator = Punctuator.load()
    port = free_port()
    config = ServeConfig(port=port)
    server = uvicorn.Server(uvicorn.Config(create_app(config, {"en-tiny": punctuator}),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}", punctuator
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    yield driver
    driver.quit()


def _restore_on_page(browser, url: str, text: str, *boxes: str, fill: str = "") -> str:
    """Paste `text` into the page, tick the checkboxes named, choose `fill` (an option's
    text), restore; the result shown."""
    browser.get(url + "/")
    wait = WebDriverWait(browser, 20)
    wait.until(lambda d: d.find_element(By.ID, "model").get_attribute("value") == "en-tiny")
    browser.find_element(By.ID, "input").send_keys(text)
    for box in boxes:
        browser.find_element(By.ID, box).click()
    if fill:
        browser.find_element(By.ID, "fill").send_keys(fill)
    browser.find_element(By.ID, "restore").click()
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "status"), "ms"))
    return browser.find_element(By.ID, "result").text


def test_page_restores_pasted_text(server_url, browser):
    url, punctuator = server_url
    text = "so what do you think i think it's great"
    shown = _restore_on_page(browser, url, text)
    assert shown == punctuator.restore(text)
    assert normalize(shown) == text.split() and shown != text


def test_page_keeps_existing_marks_when_asked(server_url, browser):
    url, punctuator = server_url
    text = "Well; so what do you think. i think it's great"
    shown = _restore_on_page(browser, url, text, "keep")
    assert shown == punctuator.restore(text, RestoreOptions(keep_existing=True))
    assert shown.startswith("Well;")


def test_page_fills_every_gap_when_asked(server_url, browser):
    url, punctuator = server_url
    text = ("Well, so what do you think? I think, it is great. well i went home and then i "
            "slept you know what i mean, it was late. Yes.")
    missing = punctuator.restore(text, RestoreOptions(keep_existing=True))
    every = punctuator.restore(text, RestoreOptions(keep_existing=True, fill="all"))
    assert missing != every  # the text writes both kinds: only --fill all adds marks
    assert _restore_on_page(browser, url, text, "keep", fill="every gap") == every


def test_page_shows_errors(server_url, browser):
    url, _ = server_url
    browser.get(url + "/")
    wait = WebDriverWait(browser, 20)
    wait.until(lambda d: d.find_element(By.ID, "model").get_attribute("value") == "en-tiny")
    browser.find_element(By.ID, "input").send_keys("not a subtitle file")
    browser.find_element(By.ID, "format").send_keys("SRT")
    browser.find_element(By.ID, "restore").click()
    wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "422"))
    assert "error" in browser.find_element(By.ID, "result").get_attribute("class")
    assert browser.find_element(By.ID, "transcribe").get_attribute("disabled") is not None
