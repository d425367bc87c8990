function [names, values] = flexfmu_parameter_list(parameters, known)
%FLEXFMU_PARAMETER_LIST flexfmu's parameter names and values from a MATLAB struct.
%   [names, values] = flexfmu_parameter_list(PARAMETERS, KNOWN) turns the
%   struct PARAMETERS, written like flexfmu's structured names, into the
%   names (cell) and values (column vector) of the parameters it sets:
%     PARAMETERS.payload.mass = 0.3                  -> payload.mass
%     PARAMETERS.link(2).EI = 40                     -> link[2].EI
%     PARAMETERS.link(1).damping_ratio = [0.01 0.02] -> link[1].damping_ratio[1], [2]
%     PARAMETERS.gravity.y = 0                       -> gravity.y
%   KNOWN lists the model's parameter names (flexfmu_fmu_info(fmu).parameters,
%   or info.parameter_names of the MEX gateway); it decides whether a single
%   element is written with an index (link[1] on a one-link arm) or without
%   (payload). A name the model does not have is an error that lists it.
%   Empty fields ([]) set nothing. A two-column cell {'link[1].EI', 30; ...}
%   is accepted as it is.
if iscell(parameters) && size(parameters, 2) == 2
    names = parameters(:, 1);
    values = cell2mat(parameters(:, 2));
elseif isstruct(parameters) && numel(parameters) == 1
    [names, values] = leaves(parameters, '', known);
else
    error('flexfmu_parameter_list:type', 'PARAMETERS must be a struct (or a two-column cell of names and values)');
end
names = names(:);
values = values(:);
unknown = names(~ismember(names, known));
if ~isempty(unknown)
    error('flexfmu_parameter_list:unknown', 'the model has no parameter %s', strjoin(unknown', ', '));
end
end

function [names, values] = leaves(s, prefix, known)
% The numeric leaves of the scalar struct S, named below PREFIX.
names = {};
values = zeros(0, 1);
for field = fieldnames(s)'
    [n, v] = element(s.(field{1}), [prefix field{1}], known);
    names = [names; n];
    values = [values; v];
end
end

function [names, values] = element(value, name, known)
% A struct (or struct array) recurses; a number is one parameter; a vector is indexed with [k];
% [] (an element MATLAB filled in, e.g. link(1).EI after setting link(2).EI) sets nothing.
indexed = any(strncmp(known, [name '['], numel(name) + 1));
if isnumeric(value) && isempty(value)
    names = {};
    values = zeros(0, 1);
elseif isstruct(value)
    names = {};
    values = zeros(0, 1);
    for k = 1:numel(value)
        label = name;
        if indexed || numel(value) > 1
            label = sprintf('%s[%d]', name, k);
        end
        [n, v] = leaves(value(k), [label '.'], known);
        names = [names; n];
        values = [values; v];
    end
elseif isnumeric(value) && isreal(value)
    if numel(value) == 1 && ~indexed
        names = {name};
    else
        names = arrayfun(@(k) sprintf('%s[%d]', name, k), (1:numel(value))', 'UniformOutput', false);
    end
    values = double(value(:));
else
    error('flexfmu_parameter_list:value', 'the value of %s must be a real number, vector or struct', name);
end
end
