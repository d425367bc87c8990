function block = flexfmu_import(model, fmu, parameters, varargin)
%FLEXFMU_IMPORT Add a flexfmu FMU to a Simulink model through the FMU Import block.
%   block = flexfmu_import(MODEL, FMU) loads the Simulink model MODEL (or
%   creates it), adds an FMU block ('simulink_extras/FMU Import/FMU') for the
%   FMU file FMU, and sets the model's solver to fixed-step discrete with the
%   FMU's communication step (its DefaultExperiment stepSize, a whole multiple
%   of its internal step): the co-simulation block then steps the FMU once per
%   solver step. Returns the block's path.
%
%   block = flexfmu_import(MODEL, FMU, PARAMETERS) also sets the FMU's
%   parameters from the struct PARAMETERS, written like flexfmu's names
%   (see flexfmu_parameter_list): PARAMETERS.payload.mass = 0.3,
%   PARAMETERS.link(2).EI = 40. A name the FMU does not have is an error.
%
%   flexfmu_import(..., 'Name', NAME) names the block (default: the FMU's
%   model identifier).
%
%   Export the FMU with `flexfmu export ARM -o ARM.fmu --interface cs`: with
%   one interface the block does not ask which to use. The FMU must hold the
%   binary of this computer (win64 or linux64; flexfmu exports both where
%   MinGW-w64 is installed).
%
%   Not run by flexfmu's tests, which have no MATLAB: MathWorks documents
%   add_block with 'FMUName', but not the names under which the block offers
%   an FMU's parameters to set_param. This function looks them up in the
%   block's DialogParameters: a parameter offered under its own name is set
%   directly; one offered as part of a struct-valued parameter (link, payload,
%   ...) is set by editing that struct. Anything else is an error naming the
%   parameter: set it in the block dialog's Parameters tab instead.
if nargin < 3
    parameters = struct();
end
name = '';
for k = 1:2:numel(varargin)
    if ~strcmpi(varargin{k}, 'Name') || k == numel(varargin)
        error('flexfmu_import:arguments', 'options are ''Name'', NAME');
    end
    name = varargin{k + 1};
end
info = flexfmu_fmu_info(fmu);
[names, values] = flexfmu_parameter_list(parameters, info.parameters);
if isempty(name)
    name = info.model_identifier;
end
if numel(info.interfaces) > 1
    warning('flexfmu_import:interfaces', ['%s holds co-simulation and model exchange; the block asks which ' ...
        'to use. Export with --interface cs to use co-simulation without asking.'], fmu);
end
if ~bdIsLoaded(model)
    if exist(model, 'file') == 4
        load_system(model);
    else
        new_system(model);
    end
end
path = fmu;
if isempty(fileparts(fmu))
    path = fullfile(pwd, fmu);
end
handle = add_block('simulink_extras/FMU Import/FMU', [model '/' name], 'MakeNameUnique', 'on', 'FMUName', path);
block = getfullname(handle);
for k = 1:numel(names)
    set_fmu_parameter(block, names{k}, values(k));
end
set_param(model, 'SolverType', 'Fixed-step', 'Solver', 'FixedStepDiscrete', ...
    'FixedStep', num2str(info.step_size, 17));
end

function set_fmu_parameter(block, name, value)
% Sets one FMU parameter of the block, directly or inside its struct-valued group.
dialog = get_param(block, 'DialogParameters');
if isvarname(name) && isfield(dialog, name)
    set_param(block, name, num2str(value, 17));
    return
end
group = regexp(name, '^[A-Za-z_]\w*', 'match', 'once');
if ~isfield(dialog, group)
    error('flexfmu_import:parameter', ['the FMU block offers no parameter %s (its parameters: %s); ' ...
        'set it in the block dialog'], name, strjoin(fieldnames(dialog)', ', '));
end
current = eval(get_param(block, group));
subs = path_of(name(numel(group) + 1:end));
try
    subsref(current, subs);  % the element must exist: never add fields the block does not have
catch
    error('flexfmu_import:parameter', ['the FMU block''s parameter %s is %s, which holds no %s; ' ...
        'set it in the block dialog'], group, get_param(block, group), name);
end
set_param(block, group, flexfmu_struct_expression(subsasgn(current, subs, value)));
end

function subs = path_of(rest)
% '[2].EI' -> the subsref/subsasgn path (2).EI; '.mass' -> .mass
subs = struct('type', {}, 'subs', {});
for part = regexp(rest, '\[\d+\]|\.\w+', 'match')
    if part{1}(1) == '['
        subs(end + 1) = struct('type', '()', 'subs', {{str2double(part{1}(2:end - 1))}});
    else
        subs(end + 1) = struct('type', '.', 'subs', part{1}(2:end));
    end
end
end
