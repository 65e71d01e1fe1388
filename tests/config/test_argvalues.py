"""The argv value rules themselves: what each accepts, what it refuses, and that it says why."""

from __future__ import annotations

import pytest

from kdmcp.argvalues import (
    ArgvValueError,
    check_command_line,
    check_host,
    check_ip_address,
    check_kdnet_key,
    check_option,
    check_path,
    check_port,
    check_remote_connection,
    check_symbol_path,
    require,
)

# Strings that would change kd's command line if they reached it unchecked.
INJECTIONS = [
    "127.0.0.2,key=1.2.3.4,port=1",
    "10.0.0.5;q",
    "target=10.0.0.5",
    '"10.0.0.5"',
    "'10.0.0.5'",
    "10.0.0.5\nq",
    "10.0.0.5\r",
    "10.0.0.5\x00",
    "10.0.0.5\x1b[2J",
    "\u202e10.0.0.5",
    "-b",
    "--remote",
]
BAD_HOSTS = [
    *INJECTIONS, "", "guest 01", "guest_01", "-guest", "guest-", "a..b", ".guest", "999.1.1.1", "1.2.3",
    "a" * 64, ".".join(["a" * 63] * 5), "[::1]", "gäst",
]
GOOD_HOSTS = ["10.0.0.5", "192.168.56.10", "::1", "fe80::1", "2001:db8::5", "guest", "guest-01", "WIN-ABC123",
              "lab.example.com", "a" * 63, "1guest.example"]


@pytest.mark.parametrize("value", GOOD_HOSTS)
def test_hosts_accepted(value: str) -> None:
    assert check_host(value) == value


@pytest.mark.parametrize("value", BAD_HOSTS)
def test_hosts_refused(value: str) -> None:
    with pytest.raises(ValueError, match=r"^must be a host name \(RFC 1123.*or an IP address; it "):
        check_host(value)


@pytest.mark.parametrize(("value", "said"), [
    ("127.0.0.2,key=1.2.3.4", "contains ',' at character 10, which would split"),
    ("10.0.0.5\nq", "control character (U+000A) at character 9"),
    ("-b", "starts with '-'"),
    ('"x"', "quote character at character 1"),
    ("999.1.1.1", "looks like an IPv4 address"),
    ("", "is empty"),
])
def test_host_messages_say_what_is_wrong(value: str, said: str) -> None:
    with pytest.raises(ValueError, match="must be a host name") as info:
        check_host(value)
    assert said in str(info.value)


@pytest.mark.parametrize("value", ["10.0.0.1", "::1", "192.168.56.1"])
def test_ip_addresses_accepted(value: str) -> None:
    assert check_ip_address(value) == value


@pytest.mark.parametrize("value", [*INJECTIONS, "notanip", "guest", "10.0.0", ""])
def test_ip_addresses_refused(value: str) -> None:
    with pytest.raises(ValueError, match=r"^must be an IP address"):
        check_ip_address(value)


@pytest.mark.parametrize("value", [0, 65536, -1, True, "50000", 5e4, None])
def test_ports_refused(value: object) -> None:
    with pytest.raises(ValueError, match="from 1 to 65535"):
        check_port(value)


def test_ports_accepted() -> None:
    assert check_port(1) == 1 and check_port(65535) == 65535


@pytest.mark.parametrize("value", ["1.2.3.4,target=x", "1.2.3.4;q", "-1.2.3.4", '"1.2.3.4"', "1.2.3.4\nq",
                                   "1.2.3.4=5", "1.2.3", "1.2.3.4.5", "1.2..4"])
def test_keys_refused(value: str) -> None:
    with pytest.raises(ValueError, match="four dot-separated base-36 words"):
        check_kdnet_key(value)


def test_keys_accepted_and_stripped() -> None:
    assert check_kdnet_key(" 1.2.3.4\n") == "1.2.3.4"


@pytest.mark.parametrize("value", ["C:\\MEMORY.DMP", "/tmp/x.dmp", "C:\\Program Files\\a,b;c=d.dmp", "app.dmp"])
def test_paths_accepted(value: str) -> None:
    assert check_path(value) == value


@pytest.mark.parametrize(("value", "said"), [
    ("-y", "starts with '-'"), ("x.dmp\n-c", "control character"), ('C:\\"x.dmp', "quote"), ("", "is empty"),
])
def test_paths_refused(value: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        check_path(value)


def test_symbol_paths() -> None:
    good = "srv*C:\\symbols*https://msdl.microsoft.com/download/symbols;C:\\more"
    assert check_symbol_path(good) == good
    for bad in ("-c .shell calc", "srv*C:\\sym\n.shell", 'srv*"C:\\sym"', ""):
        with pytest.raises(ValueError):
            check_symbol_path(bad)


def test_options() -> None:
    assert check_option("-noshell") == "-noshell"
    for bad in ("noshell", "-no shell", "-c=.shell", "-", "--x", "-x\n", "-c;.shell"):
        with pytest.raises(ValueError):
            check_option(bad)


def test_command_lines() -> None:
    assert check_command_line(["C:\\app.exe", "-x", "a b"]) == ["C:\\app.exe", "-x", "a b"]
    for bad, said in ([[], "is empty"], [["-p", "1"], "the executable starts with '-'"],
                      [["app.exe", "a\nb"], "element 1 contains a control character"],
                      [["app.exe", 'say "hi"'], "element 1 contains a quote"], [[""], "the executable is empty"]):
        with pytest.raises(ValueError, match=said):
            check_command_line(bad)


@pytest.mark.parametrize("value", ["tcp:server=127.0.0.1,port=5005", "tcp:server=lab-host,port=5005,password=p4ss",
                                   "npipe:server=lab-host,pipe=kd_pipe", "com:port=com1,baud=115200,channel=0",
                                   "tcp:clicon=10.0.0.5,port=5005,ipversion=6"])
def test_remote_connections_accepted(value: str) -> None:
    assert check_remote_connection(value) == value


@pytest.mark.parametrize(("value", "said"), [
    ("tcp:server=h,port=5005 -y x", "blank"),
    ("tcp:server=-h,port=1", "server=: must be a host name"),
    ("tcp:server=h;x,port=1", "';'"),
    ("tcp:server=h,port=99999", "port= must be"),
    ("tcp:server=h,port=1,port=2", "given twice"),
    ("bogus:server=h", "must start with a transport"),
    ("tcp:server=h,port=1\n", "control character"),
    ("-remote", "starts with '-'"),
    ('tcp:server=h,port=1,password="x"', "quote"),
    ("tcp:", "name=value"),
    ("tcp:server", "name=value"),
    ("tcp:server=,port=1", "name=value"),
    ("tcp:server=h,port=1,pipe=x", "not one tcp takes"),
    ("npipe:server=h,pipe=a=b", "contains '='"),
    ("npipe:server=h,pipe=-x", "starts with '-'"),
    ("npipe:server=h,pipe=a/b", "letters, digits"),
])
def test_remote_connections_refused(value: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        check_remote_connection(value)


def test_require_names_the_field() -> None:
    with pytest.raises(ArgvValueError) as info:
        require("guest_host", "-b", check_host)
    assert info.value.field == "guest_host"
    assert str(info.value).startswith("guest_host: must be a host name")
    assert require("port", 50000, check_port) == 50000


def test_messages_never_quote_a_password() -> None:
    with pytest.raises(ValueError) as info:
        check_remote_connection('tcp:server=h,port=1,password=s3cr3t"pw')
    assert "s3cr3t" not in str(info.value)
