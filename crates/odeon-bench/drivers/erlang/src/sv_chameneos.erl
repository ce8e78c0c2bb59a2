%% @doc Savina #7 Chameneos (savina.md §3.7): C chameneos meet pairwise through one
%% broker, the Mall, until it has arranged M meetings; then the Mall fades every
%% chameneo that asks for another meeting and sums their meeting counts.
-module(sv_chameneos).
-export([params/1, run/2]).

-define(FADED, 3).

%% {flag, default, quick, minimum}. C >= 2: a lone chameneo would wait forever.
params(_) -> [{"c", 100, 10, 2}, {"m", 200000, 2000, 0}].

run(_, #{"c" := C, "m" := M}) ->
    Latch = {self(), make_ref()},
    {Ns, Infos} =
        sv_util:timed(
          fun() ->
                  spawn(fun() -> mall_start(Latch, C, M) end),
                  sv_util:await(Latch, C + 1)
          end),
    {mall, Sum, Faded} = lists:keyfind(mall, 1, Infos),
    Own = lists:sum([K || {chameneo, K} <- Infos]),
    Check = case sv_util:expect("faded chameneos", Faded, C) of
                {ok, _} when Own =/= Sum ->
                    sv_util:expect("meetings counted by the chameneos", Own, Sum);
                {ok, _} -> sv_util:expect("sum of meetings", Sum, 2 * M);
                Err -> Err
            end,
    {Ns, Check}.

%% The Mall creates the chameneos when it starts; colour i mod 3 is RED (0),
%% YELLOW (1), BLUE (2).
mall_start(Latch, C, M) ->
    Mall = self(),
    [spawn(fun() -> chameneo_start(Latch, Mall, I rem 3) end) || I <- lists:seq(0, C - 1)],
    mall(Latch, C, M, none, 0, 0).

%% N: meetings still allowed; Waiting: the chameneo in the slot (or none).
mall(Latch, C, N, Waiting, Sum, Faded) ->
    receive
        {meet, _Colour, Sender} when N =:= 0 ->
            Sender ! {exit, self()},
            mall(Latch, C, N, Waiting, Sum, Faded);
        {meet, _Colour, Sender} when Waiting =:= none ->
            mall(Latch, C, N, Sender, Sum, Faded);
        {meet, _Colour, _Sender} = Meet ->
            Waiting ! Meet,
            mall(Latch, C, N - 1, none, Sum, Faded);
        {meeting_count, Count, _Sender} when Faded + 1 =:= C ->
            sv_util:done(Latch, {mall, Sum + Count, C});
        {meeting_count, Count, _Sender} ->
            mall(Latch, C, N, Waiting, Sum + Count, Faded + 1)
    end.

chameneo_start(Latch, Mall, Colour) ->
    Mall ! {meet, Colour, self()},
    chameneo(Latch, Mall, Colour, 0).

chameneo(Latch, Mall, Colour, Meetings) ->
    receive
        {meet, Other, From} ->
            New = complement(Colour, Other),
            From ! {change, New, self()},
            Mall ! {meet, New, self()},
            chameneo(Latch, Mall, New, Meetings + 1);
        {change, New, _From} ->
            Mall ! {meet, New, self()},
            chameneo(Latch, Mall, New, Meetings + 1);
        {exit, From} ->
            From ! {meeting_count, Meetings, self()},
            sv_util:done(Latch, {chameneo, Meetings})
    end.

%% Same colours stay; FADED wins; two different live colours give the third.
complement(C, C) -> C;
complement(?FADED, _) -> ?FADED;
complement(_, ?FADED) -> ?FADED;
complement(A, B) -> 3 - A - B.
