%% Remote-messaging benchmarks between two Erlang nodes (two OS processes) on loopback.
%%
%% Server node: `-s remote_bench server`; registers the process `remote_bench_server`,
%% prints `REMOTE-READY <port>` on stdout and serves until the client node disconnects
%% (or the run.sh process named by `-remote_parent PID` is gone).
%% Client node: `-s remote_bench client -extra <rtt|throughput> [--quick]`, with
%% `-remote_peer_port <port>`; prints `REMOTE-RESULT {...}` lines and halts with 0, or
%% halts with 1 after a message on stderr.
%%
%% Messages (plain terms sent with `!` over the distribution connection):
%%   rtt:        client -> server {req, ClientPid, I};  server -> client I
%%   throughput: client -> server I (integers 1..N, fire-and-forget),
%%               then {done, ClientPid, N}; server -> client {count, Count, Sum}
-module(remote_bench).

-export([server/0, client/0]).

-define(SERVER, remote_bench_server).
-define(REPLY_TIMEOUT, 120000).

%%% ---------------------------------------------------------------------------- server

server() ->
    try
        Port = remote_epmd:listen_port(),
        is_integer(Port) orelse error(no_listen_port),
        Pid = spawn(fun() -> serve(0, 0) end),
        register(?SERVER, Pid),
        start_watchdogs(),
        io:format("REMOTE-READY ~b~n", [Port])
    catch
        C:E:St ->
            io:format(standard_error, "erlang server: ~p:~p~n~p~n", [C, E, St]),
            halt(1)
    end.

%% The server loop: every receive takes the first message in the mailbox.
serve(Count, Sum) ->
    receive
        I when is_integer(I) ->
            serve(Count + 1, Sum + I);
        {req, From, I} ->
            From ! I,
            serve(Count, Sum);
        {done, From, _N} ->
            %% Messages from one process to another arrive in the order sent, so every
            %% integer of the pass is already counted; the client checks count and sum.
            From ! {count, Count, Sum},
            serve(0, 0);
        {hello, From} ->
            From ! {hello, self()},
            serve(Count, Sum);
        Other ->
            io:format(standard_error, "erlang server: unexpected message ~p~n", [Other]),
            halt(1)
    end.

%% The server never outlives its run: it halts when the client node disconnects, when
%% the run.sh process is gone, or after an hour.
start_watchdogs() ->
    spawn(fun() ->
                  ok = net_kernel:monitor_nodes(true),
                  receive {nodedown, _} -> halt(0) end
          end),
    case init:get_argument(remote_parent) of
        {ok, [[Parent | _] | _]} ->
            spawn(fun() -> watch_parent(Parent) end);
        _ -> ok
    end,
    spawn(fun() -> timer:sleep(3600 * 1000), halt(3) end),
    ok.

watch_parent(Parent) ->
    timer:sleep(1000),
    case os:cmd("kill -0 " ++ Parent ++ " 2>/dev/null && echo alive") of
        "alive" ++ _ -> watch_parent(Parent);
        _ -> halt(2)
    end.

%%% ---------------------------------------------------------------------------- client

client() ->
    Status =
        try
            run_client(init:get_plain_arguments()),
            0
        catch
            throw:{usage, Msg} ->
                io:format(standard_error, "erlang client: ~s~n", [Msg]),
                2;
            throw:{fail, Fmt, Args} ->
                io:format(standard_error, "erlang client: " ++ Fmt ++ "~n", Args),
                1;
            C:E:St ->
                io:format(standard_error, "erlang client: ~p:~p~n~p~n", [C, E, St]),
                1
        end,
    halt(Status).

run_client(Args) ->
    {Bench, Quick} = parse_args(Args, undefined, false),
    Div = case Quick of true -> 20; false -> 1 end,
    Server = connect(),
    case Bench of
        rtt -> rtt(Server, 5000 div Div, 20000 div Div);
        throughput -> throughput(Server, 1000000 div Div, 1, 3)
    end.

parse_args([], undefined, _) -> throw({usage, "usage: <rtt|throughput> [--quick]"});
parse_args([], Bench, Quick) -> {Bench, Quick};
parse_args(["--quick" | T], B, _) -> parse_args(T, B, true);
parse_args(["rtt" | T], undefined, Q) -> parse_args(T, rtt, Q);
parse_args(["throughput" | T], undefined, Q) -> parse_args(T, throughput, Q);
parse_args([A | _], _, _) -> throw({usage, "unexpected argument " ++ A}).

%% Connect to the server node and learn the server's pid (all later sends go to the pid).
connect() ->
    {ok, [[Name | _] | _]} = init:get_argument(remote_server_node),
    Node = list_to_atom(Name),
    case net_kernel:connect_node(Node) of
        true -> ok;
        _ -> throw({fail, "cannot connect to ~s", [Node]})
    end,
    {?SERVER, Node} ! {hello, self()},
    receive
        {hello, Pid} when is_pid(Pid) ->
            %% A lost server (node down, process exit) fails the run at once.
            erlang:monitor(process, Pid),
            Pid
    after ?REPLY_TIMEOUT -> throw({fail, "no answer from the server at ~s", [Node]})
    end.

%% rtt: one outstanding request; each round trip timed on the monotonic clock.
rtt(Server, Warmup, Samples) ->
    _ = round_trips(Server, 1, Warmup, []),
    Times = lists:sort(round_trips(Server, 1, Samples, [])),
    N = length(Times),
    P50 = percentile(Times, N, 50) / 1000,
    P99 = percentile(Times, N, 99) / 1000,
    io:format("REMOTE-RESULT {\"runtime\":\"erlang\",\"bench\":\"rtt\",\"p50_us\":~.3f,"
              "\"p99_us\":~.3f,\"samples\":~b}~n", [P50, P99, N]).

round_trips(_Server, I, K, Acc) when I > K -> Acc;
round_trips(Server, I, K, Acc) ->
    T0 = erlang:monotonic_time(nanosecond),
    Server ! {req, self(), I},
    receive
        I -> ok;
        {'DOWN', _, process, _, Why} -> throw({fail, "rtt: server lost: ~p", [Why]});
        Other -> throw({fail, "rtt: expected reply ~b, got ~p", [I, Other]})
    after ?REPLY_TIMEOUT -> throw({fail, "rtt: no reply to request ~b", [I]})
    end,
    T1 = erlang:monotonic_time(nanosecond),
    round_trips(Server, I + 1, K, [T1 - T0 | Acc]).

%% Nearest-rank percentile of a sorted list of N samples.
percentile(Sorted, N, P) ->
    Rank = max(1, (P * N + 99) div 100),
    lists:nth(Rank, Sorted).

%% throughput: W untimed passes, then K timed ones, each N one-way sends and a done? request.
throughput(Server, N, Warmups, Passes) ->
    lists:foreach(fun(_) -> _ = pass(Server, N) end, lists:seq(1, Warmups)),
    lists:foreach(
      fun(P) ->
              Ns = pass(Server, N),
              io:format("REMOTE-RESULT {\"runtime\":\"erlang\",\"bench\":\"throughput\","
                        "\"pass\":~b,\"messages\":~b,\"msgs_per_s\":~.1f}~n",
                        [P, N, N * 1.0e9 / Ns])
      end, lists:seq(1, Passes)).

pass(Server, N) ->
    T0 = erlang:monotonic_time(nanosecond),
    send_all(Server, 1, N),
    Server ! {done, self(), N},
    receive
        {count, Count, Sum} ->
            T1 = erlang:monotonic_time(nanosecond),
            Expected = N * (N + 1) div 2,
            case {Count, Sum} of
                {N, Expected} -> T1 - T0;
                _ -> throw({fail, "throughput: server counted ~b messages summing to ~b, "
                            "expected ~b and ~b", [Count, Sum, N, Expected]})
            end;
        {'DOWN', _, process, _, Why} -> throw({fail, "throughput: server lost: ~p", [Why]})
    after ?REPLY_TIMEOUT -> throw({fail, "throughput: no reply to done? after ~b sends", [N]})
    end.

send_all(_Server, I, N) when I > N -> ok;
send_all(Server, I, N) ->
    Server ! I,
    send_all(Server, I + 1, N).
