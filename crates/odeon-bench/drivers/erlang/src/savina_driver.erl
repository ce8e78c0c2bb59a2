%% @doc The Erlang/OTP Savina driver: parses the driver command line of
%% `crates/odeon-bench/savina/src/protocol.rs', runs the iterations and prints one
%% `SAVINA-RESULT {json}' line per iteration.
%%
%% Started by `run.sh' as `erl +S T:T ... -s savina_driver main -extra ARGS'. The
%% scheduler count must be fixed when the VM boots, so `run.sh' reads `--threads'
%% itself; this module parses it again (to validate it and to reject bad input with
%% exit status 2 like every other driver).
-module(savina_driver).
-export([main/0]).

-define(EXIT_INVALID, 3).
-define(EXIT_USAGE, 2).
-define(EXIT_UNSUPPORTED, 4).

%% Every id of the shared catalog (`catalog.rs'): an id outside this list is bad
%% input (exit 2), an id in it that has no module below is unsupported (exit 4).
-define(CATALOG, ["pingpong", "threadring", "counting", "fjthrput", "fjcreate", "fib",
                  "chameneos", "big", "concdict", "concsll", "bndbuffer", "philosopher",
                  "barber", "cigsmok", "logmap", "banking", "apsp", "astar", "nqueenk",
                  "recmatmul", "quicksort", "radixsort", "filterbank", "bitonicsort",
                  "sieve", "uct", "facloc", "trapezoid", "piprecision", "sor",
                  "threadring503"]).

%% The benchmarks this driver implements, and their module.
implemented("pingpong") -> {ok, sv_pingpong};
implemented("threadring") -> {ok, sv_threadring};
implemented("threadring503") -> {ok, sv_threadring};
implemented("counting") -> {ok, sv_counting};
implemented("fjthrput") -> {ok, sv_fjthrput};
implemented("fjcreate") -> {ok, sv_fjcreate};
implemented("chameneos") -> {ok, sv_chameneos};
implemented("big") -> {ok, sv_big};
implemented(_) -> none.

main() ->
    Args = init:get_plain_arguments(),
    Code = try run(Args)
           catch throw:{usage, Msg} ->
                   io:format(standard_error, "erlang: ~ts~n", [Msg]),
                   ?EXIT_USAGE
           end,
    erlang:halt(Code).

run([]) ->
    throw({usage, usage()});
run([Id | Rest]) ->
    case lists:member(Id, ?CATALOG) of
        false -> throw({usage, "unknown benchmark \"" ++ Id ++ "\"\n" ++ usage()});
        true -> ok
    end,
    case implemented(Id) of
        none ->
            io:format("SAVINA-UNSUPPORTED ~s~n", [Id]),
            ?EXIT_UNSUPPORTED;
        {ok, Mod} ->
            Spec = Mod:params(Id),
            Quick = lists:member("--quick", Rest),
            Init = #{variant => "", iterations => 1, warmup => 0,
                     threads => erlang:system_info(schedulers_online),
                     params => maps:from_list([{K, case Quick of true -> Q; false -> D end}
                                               || {K, D, Q, _Min} <- Spec])},
            Opts = parse(Id, Spec, [A || A <- Rest, A =/= "--quick"], Init),
            check_variant(maps:get(variant, Opts)),
            iterate(Id, Mod, Opts)
    end.

usage() ->
    "usage: run.sh <bench> [--variant V] [--iterations K] [--warmup W] [--threads T] "
    "[--quick] [-flag value]...\nbenchmarks: " ++ lists:join(" ", ?CATALOG).

parse(_Id, _Spec, [], Acc) ->
    Acc;
parse(_Id, _Spec, [Flag], _Acc) ->
    throw({usage, Flag ++ " needs a value"});
parse(Id, Spec, [Flag, Value | Rest], Acc) ->
    Acc1 = case Flag of
               "--variant" -> Acc#{variant := Value};
               "--iterations" -> Acc#{iterations := count(Flag, Value)};
               "--warmup" -> Acc#{warmup := count(Flag, Value)};
               "--threads" -> Acc#{threads := max(1, count(Flag, Value))};
               [$-, C | Key] when C =/= $- -> set_param(Id, Spec, [C | Key], Value, Acc);
               _ -> throw({usage, "unexpected argument \"" ++ Flag ++ "\"\n" ++ usage()})
           end,
    parse(Id, Spec, Rest, Acc1).

count(Flag, Value) ->
    case string:to_integer(Value) of
        {N, []} when N >= 0 -> N;
        _ -> throw({usage, Flag ++ " \"" ++ Value ++ "\" is not a count"})
    end.

%% Savina's parameters of these seven benchmarks are all integers; each module
%% gives the smallest value its protocol terminates with.
set_param(Id, Spec, Key, Value, Acc = #{params := P}) ->
    case lists:keyfind(Key, 1, Spec) of
        false ->
            Known = lists:join(" ", ["-" ++ K || {K, _, _, _} <- Spec]),
            throw({usage, Id ++ ": unknown parameter -" ++ Key ++ " (known: " ++ Known ++ ")"});
        {Key, _, _, Min} ->
            case string:to_integer(Value) of
                {N, []} when N >= Min -> Acc#{params := P#{Key := N}};
                {N, []} ->
                    throw({usage, io_lib:format("~s: -~s ~p is below the minimum ~p",
                                                [Id, Key, N, Min])});
                _ ->
                    throw({usage, Id ++ ": -" ++ Key ++ " \"" ++ Value ++ "\" is not an integer"})
            end
    end.

%% One configuration only: plain processes on the default schedulers.
check_variant(V) when V =:= ""; V =:= "default" -> ok;
check_variant(V) -> throw({usage, "unknown variant \"" ++ V ++ "\" (erlang has only the default one)"}).

iterate(Id, Mod, Opts = #{params := Params, iterations := K, warmup := W, threads := T}) ->
    Online = erlang:system_info(schedulers_online),
    case Online =:= T of
        true -> ok;
        false -> io:format(standard_error,
                           "erlang: warning: --threads ~p but ~p schedulers online "
                           "(start through run.sh, which passes +S)~n", [T, Online])
    end,
    %% Interactive-mode code loading would otherwise land in the first timed region.
    [{module, _} = code:ensure_loaded(M) || M <- [Mod, sv_util, lists, proplists, maps, math]],
    Runs = [{I, true} || I <- lists:seq(0, W - 1)] ++ [{I, false} || I <- lists:seq(0, K - 1)],
    Valid = lists:foldl(
              fun({I, Warm}, AllValid) ->
                      {Ns, Check} = Mod:run(Id, Params),
                      {Ok, Detail} = case Check of
                                         {ok, D} -> {true, D};
                                         {error, D} -> {false, D}
                                     end,
                      print_result(Id, maps:get(variant, Opts), I, Warm, Ns, Ok, Detail),
                      AllValid andalso Ok
              end, true, Runs),
    case Valid of
        true -> 0;
        false -> ?EXIT_INVALID
    end.

print_result(Id, Variant, I, Warm, Ns, Ok, Detail) ->
    Json = ["{\"bench\":", json_str(Id), ",\"runtime\":\"erlang\",\"variant\":", json_str(Variant),
            ",\"iteration\":", integer_to_list(I), ",\"warmup\":", atom_to_list(Warm),
            ",\"ns\":", integer_to_list(Ns), ",\"valid\":", atom_to_list(Ok),
            ",\"detail\":", json_str(lists:flatten(Detail)), "}"],
    io:put_chars(["SAVINA-RESULT ", Json, $\n]).

json_str(S) ->
    [$", [esc(C) || C <- S], $"].

esc($") -> "\\\"";
esc($\\) -> "\\\\";
esc(C) when C < 32 -> io_lib:format("\\u~4.16.0b", [C]);
esc(C) -> C.
