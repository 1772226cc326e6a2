import os
import signal
import threading

from ground.stop_signals import stop_on_signals


def test_sigterm_and_sigint_set_the_event_inside_and_the_old_handlers_come_back_after():
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(5)
        stop.clear()
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.wait(5)
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_off_the_main_thread_it_leaves_the_handlers_alone_and_hands_back_the_given_event():
    given = threading.Event()
    seen = {}

    def body() -> None:
        with stop_on_signals(given) as stop:
            seen["same"] = stop is given
            seen["handler"] = signal.getsignal(signal.SIGTERM)

    before = signal.getsignal(signal.SIGTERM)
    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert seen == {"same": True, "handler": before}
