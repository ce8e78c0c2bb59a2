%% Port discovery for the two-node benchmark without the epmd daemon, plugged in with
%% `-start_epmd false -epmd_module remote_epmd` (the documented erl_epmd callback
%% interface). It only replaces the name-to-port lookup done once per connection; the
%% distribution connection itself is the standard inet_tcp one.
%%
%% * Listening: `listen_port_please/2` returns 0, so the OS picks a free port; the port
%%   actually bound is handed to `register_node/3`, kept here, and read back with
%%   `listen_port/0` (the server prints it).
%% * Connecting: `port_please/3` answers with the port given as `-remote_peer_port P`.
-module(remote_epmd).

-export([start_link/0, register_node/2, register_node/3, listen_port_please/2,
         port_please/2, port_please/3, address_please/3, names/0, names/1,
         listen_port/0]).

%% erl_distribution starts the callback module as a child; no process is needed.
start_link() -> ignore.

register_node(Name, Port) -> register_node(Name, Port, inet_tcp).

register_node(_Name, Port, _Family) ->
    persistent_term:put({?MODULE, listen_port}, Port),
    %% The "creation" distinguishes incarnations of a node name; 1..3 are valid.
    {ok, rand:uniform(3)}.

listen_port_please(_Name, _Host) -> {ok, 0}.

listen_port() -> persistent_term:get({?MODULE, listen_port}, undefined).

port_please(Name, Host) -> port_please(Name, Host, infinity).

port_please(_Name, _Host, _Timeout) ->
    case init:get_argument(remote_peer_port) of
        {ok, [[P | _] | _]} -> {port, list_to_integer(P), 6}; % distribution version 6 (OTP 23+)
        _ -> noport
    end.

address_please(_Name, Host, Family) -> inet:getaddr(Host, Family).

names() -> names(localhost).
names(_Host) -> {error, address}.
