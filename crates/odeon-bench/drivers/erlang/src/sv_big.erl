%% @doc Savina #8 Big (savina.md §3.8): W workers ping random workers (Savina's
%% PseudoRandom seeded with the worker's id) N times each; each pong must come from
%% the worker last pinged. A Sink collects one exit per worker, then stops them all.
-module(sv_big).
-export([params/1, run/2]).

%% {flag, default, quick, minimum}.
params(_) -> [{"n", 20000, 200, 0}, {"w", 120, 10, 1}].

run(_, #{"n" := N, "w" := W}) ->
    Latch = {self(), make_ref()},
    {Ns, Infos} =
        sv_util:timed(
          fun() ->
                  Sink = spawn(fun() -> sink_start(Latch, W) end),
                  Workers = list_to_tuple([spawn(fun() -> worker_start(Latch, I, N, Sink) end)
                                           || I <- lists:seq(0, W - 1)]),
                  Sink ! {neighbors, Workers},
                  [P ! {neighbors, Workers} || P <- tuple_to_list(Workers)],
                  [P ! {pong, -1} || P <- tuple_to_list(Workers)],
                  sv_util:await(Latch, W + 1)
          end),
    Exits = proplists:get_value(sink, Infos),
    Pings = lists:sum([S || {worker, S, _} <- Infos]),
    Errors = lists:sum([E || {worker, _, E} <- Infos]),
    {Ns, check([{"exits at the sink", Exits, W},
                {"pings sent", Pings, W * N},
                {"expected-pinger errors", Errors, 0}])}.

check([{What, Got, Expected}]) ->
    sv_util:expect(What, Got, Expected);
check([{What, Got, Expected} | Rest]) ->
    case sv_util:expect(What, Got, Expected) of
        {ok, D} ->
            case check(Rest) of
                {ok, More} -> {ok, [D, "; ", More]};
                Err -> Err
            end;
        Err -> Err
    end.

sink_start(Latch, W) ->
    receive
        {neighbors, Workers} -> sink(Latch, W, Workers, 0)
    end.

sink(Latch, W, Workers, Exits) ->
    receive
        exit when Exits + 1 =:= W ->
            [P ! exit || P <- tuple_to_list(Workers)],
            sv_util:done(Latch, {sink, W});
        exit ->
            sink(Latch, W, Workers, Exits + 1)
    end.

worker_start(Latch, Id, N, Sink) ->
    receive
        {neighbors, Workers} -> worker({Latch, Id, N, Sink, Workers}, Id, -1, 0, 0)
    end.

%% Fixed: {Latch, Id, N, Sink, Workers}. Rng: PseudoRandom's state, seeded with the
%% id; Expected: the worker last pinged (-1 before the kick-off); Sent: pings sent;
%% Errors: pongs from an unexpected worker.
worker(Fixed = {Latch, Id, N, Sink, Workers}, Rng, Expected, Sent, Errors) ->
    receive
        {ping, From} ->
            element(From + 1, Workers) ! {pong, Id},
            worker(Fixed, Rng, Expected, Sent, Errors);
        {pong, From} ->
            Errors1 = case From =:= Expected of
                          true -> Errors;
                          false -> Errors + 1
                      end,
            case Sent =:= N of
                true ->
                    Sink ! exit,
                    worker(Fixed, Rng, Expected, Sent, Errors1);
                false ->
                    Rng1 = (Rng * 1309 + 13849) band 65535,
                    Target = Rng1 rem tuple_size(Workers),
                    element(Target + 1, Workers) ! {ping, Id},
                    worker(Fixed, Rng1, Target, Sent + 1, Errors1)
            end;
        exit ->
            sv_util:done(Latch, {worker, Sent, Errors})
    end.
